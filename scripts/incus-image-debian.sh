#!/usr/bin/env bash
# Builds a Debian cloud image for Incus from Debian's archive (no image server needed) and
# imports it under the alias given: `incus-image-debian.sh <suite> <alias> [<svc runtime dir>]`,
# e.g. `bookworm debian-12`. Skips the work when the alias exists (set REBUILD=1 to replace it).
# With a runtime directory (Node and the one-file `svc`, see incus-images.sh) it is the Agent
# image: that runtime in /opt/svc, the user `agent` whose home is the Agent's home, `svc gateway`
# as a system service running as that user, and code-server (RECIPE, when set, is recorded as the
# image's `recipe` property: see incus-images.sh).
# The image boots with cloud-init reading the NoCloud seed that its templates write from the
# instance's `cloud-init.user-data`, with `instance-id` = the instance name, so a copy (a clone)
# runs cloud-init again.
set -euo pipefail

suite="${1:?suite, e.g. bookworm}"
alias="${2:?alias, e.g. debian-12}"
runtime="${3:-}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
here=$(cd "$(dirname "$0")" && pwd)

replaced=
if incus image alias list --format csv | grep -q "^${alias},"; then
  [ "${REBUILD:-0}" = 1 ] || { echo "image ${alias}: present"; exit 0; }
  replaced=$(incus image alias list --format csv | sed -n "s/^${alias},\([0-9a-f]*\),.*/\1/p")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

packages=systemd-sysv,dbus,openssh-server,cloud-init,sudo,ifupdown,isc-dhcp-client,iproute2,netbase,ca-certificates,locales
agent_hooks=()
if [ -n "$runtime" ]; then
  [ -x "$runtime/bin/node" ] && [ -f "$runtime/svc.mjs" ] ||
    { echo "image ${alias}: ${runtime} has no bin/node and svc.mjs"; exit 1; }
  # What a person expects in a terminal, and what the providers' tools install with.
  packages+=,git,curl,less,nano,procps,xz-utils
  agent_hooks=(
    --customize-hook="cp -a '${runtime}' \"\$1\"/opt/svc"
    --customize-hook="bash '${here}/incus-image-agent-root.sh' \"\$1\""
  )
fi

echo "image ${alias}: building Debian ${suite} with mmdebstrap"
mmdebstrap --quiet --variant=apt \
  --include="$packages" \
  --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*; : > "$1"/etc/machine-id; rm -f "$1"/var/lib/dbus/machine-id' \
  --customize-hook='printf "datasource_list: [ NoCloud, None ]\n" > "$1"/etc/cloud/cloud.cfg.d/90-incus.cfg' \
  --customize-hook='sed -i "s/^# *en_US.UTF-8/en_US.UTF-8/" "$1"/etc/locale.gen; chroot "$1" locale-gen >/dev/null' \
  "${agent_hooks[@]}" \
  "$suite" "$work/rootfs.tar.zst" "$mirror"

mkdir -p "$work/meta/templates"
cat >"$work/meta/metadata.yaml" <<EOF
architecture: x86_64
creation_date: $(date +%s)
properties:
  os: debian
  release: ${suite}
  variant: cloud
  description: Debian ${suite} (cloud-init${runtime:+, svc Agent})${RECIPE:+
  recipe: ${RECIPE}}
templates:
  /etc/hostname:
    when: [create, copy]
    template: hostname.tpl
  /etc/hosts:
    when: [create, copy]
    template: hosts.tpl
  /var/lib/cloud/seed/nocloud-net/meta-data:
    when: [create, copy]
    template: cloud-init-meta.tpl
  /var/lib/cloud/seed/nocloud-net/user-data:
    when: [create, copy]
    template: cloud-init-user.tpl
    properties:
      default: |
        #cloud-config
        {}
  /var/lib/cloud/seed/nocloud-net/vendor-data:
    when: [create, copy]
    template: cloud-init-vendor.tpl
    properties:
      default: |
        #cloud-config
        {}
  /var/lib/cloud/seed/nocloud-net/network-config:
    when: [create, copy]
    template: cloud-init-network.tpl
EOF
printf '{{ instance.name }}\n' >"$work/meta/templates/hostname.tpl"
printf '127.0.0.1 localhost\n127.0.1.1 {{ instance.name }}\n' >"$work/meta/templates/hosts.tpl"
printf 'instance-id: {{ instance.name }}\nlocal-hostname: {{ instance.name }}\n' \
  >"$work/meta/templates/cloud-init-meta.tpl"
printf '{{ config_get("cloud-init.user-data", properties.default) }}\n' \
  >"$work/meta/templates/cloud-init-user.tpl"
printf '{{ config_get("cloud-init.vendor-data", properties.default) }}\n' \
  >"$work/meta/templates/cloud-init-vendor.tpl"
cat >"$work/meta/templates/cloud-init-network.tpl" <<'EOF'
{% if config_get("cloud-init.network-config", "") == "" %}version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: dhcp
        control: auto
{% else %}{{ config_get("cloud-init.network-config", "") }}{% endif %}
EOF
tar -C "$work/meta" -czf "$work/metadata.tar.gz" metadata.yaml templates
# The alias moves to the new image only once it is built: a failed build leaves the old one.
[ -z "$replaced" ] || incus image alias delete "$alias"
incus image import "$work/metadata.tar.gz" "$work/rootfs.tar.zst" --alias "$alias" >/dev/null
# The image it replaces is left to nothing (an instance keeps its own copy).
[ -z "$replaced" ] || incus image delete "$replaced" 2>/dev/null || true
echo "image ${alias}: imported"
