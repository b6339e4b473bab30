#!/usr/bin/env bash
# mmdebstrap customize hook of the Agent image: `incus-image-agent-root.sh <root>`. The runtime is
# already in <root>/opt/svc (bin/node, svc.mjs and what it loads). Adds the user `agent` (uid
# 1000, passwordless sudo: the machine is theirs) whose home is the Agent's home, `svc` and `node`
# on every PATH, `svc gateway` as a system service, enabled, and code-server, which the gateway
# serves as the Agent's editor.
set -euo pipefail
root="${1:?root directory}"

chroot "$root" useradd --create-home --uid 1000 --user-group --shell /bin/bash agent
install -d -o 1000 -g 1000 -m 0700 "$root/home/agent/.crabglamp"
printf 'agent ALL=(ALL) NOPASSWD:ALL\n' >"$root/etc/sudoers.d/agent"
chmod 0440 "$root/etc/sudoers.d/agent"

# The Agent's user is `agent`: no distribution default user beside it.
printf 'users: []\n' >"$root/etc/cloud/cloud.cfg.d/91-svc-agent.cfg"

ln -sf /opt/svc/bin/node "$root/usr/local/bin/node"
cat >"$root/usr/local/bin/svc" <<'SH'
#!/bin/sh
exec /opt/svc/bin/node /opt/svc/svc.mjs "$@"
SH
chmod 0755 "$root/usr/local/bin/svc"

# The platform writes ~/.crabglamp/agent.env (service URL, Agent id, token) through the Incus
# file API before the first start and whenever the token changes; the gateway reads it afresh.
cat >"$root/etc/systemd/system/svc-gateway.service" <<'UNIT'
[Unit]
Description=svc gateway: this Agent's editor and terminal for the browser
After=network.target

[Service]
User=agent
Group=agent
WorkingDirectory=/home/agent
Environment=HOME=/home/agent SHELL=/bin/bash LANG=C.UTF-8
Environment=SVC_GATEWAY_HOST=0.0.0.0 SVC_GATEWAY_PORT=8443
ExecStart=/usr/local/bin/svc gateway
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/svc-gateway.service \
  "$root/etc/systemd/system/multi-user.target.wants/svc-gateway.service"

# code-server, which the gateway serves as the Agent's editor (scripts/agent-code-server.sh), built
# in the root with the Node headers and npm cache of this host (AGENT_NODE_HEADERS, AGENT_NPM_CACHE)
# bound in: a second build fetches from the registry only what changed.
build="$root/tmp/svc-code-server"
mkdir -p "$build/headers" "$build/npm-cache"
cp "$(dirname "$0")/agent-code-server.sh" "$build/"
binds=()
bind() { mkdir -p "$1"; mount --bind "$1" "$2"; binds=("$2" "${binds[@]}"); }
unbind() { for dir in "${binds[@]}"; do umount "$dir"; done; }
trap unbind EXIT
bind "${AGENT_NPM_CACHE:?npm cache directory}" "$build/npm-cache"
headers=
if [ -n "${AGENT_NODE_HEADERS:-}" ]; then
  bind "$AGENT_NODE_HEADERS" "$build/headers"
  headers=/tmp/svc-code-server/headers
fi
# This host's trusted certificates, for the build only: a host whose HTTPS goes through an
# inspecting proxy trusts that proxy's CA, which Debian's bundle in the root does not hold.
cp /etc/ssl/certs/ca-certificates.crt "$build/ca.crt"
# A clean environment: this runs under `npm run`, whose npm_config_* (its Node's version among
# them) would pass for the inner npm's own.
chroot "$root" env -i HOME=/root LANG=C.UTF-8 NODE_HEADERS="$headers" \
  NPM_CACHE=/tmp/svc-code-server/npm-cache CA_BUNDLE=/tmp/svc-code-server/ca.crt \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash /tmp/svc-code-server/agent-code-server.sh
# Anything the install left running in the root (a build helper's daemon) would keep its /proc
# busy when mmdebstrap unmounts it, failing the build after all its work.
real=$(realpath "$root")
for proc in /proc/[0-9]*; do
  [ "$(readlink "$proc/root" 2>/dev/null)" = "$real" ] && kill "${proc#/proc/}" 2>/dev/null
done
unbind
trap - EXIT
rm -rf "$build"
