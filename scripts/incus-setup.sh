#!/usr/bin/env bash
# `npm run incus:setup`: everything the `incus` compute driver needs on this host, idempotent.
# Installs Incus from Debian's backports where it is missing, starts lxcfs and incusd where they
# are not running (systemd units where systemd runs, else by hand), and creates the storage pool,
# the bridge and the default profile's devices, and builds the Debian images. Run as root.
set -euo pipefail

INCUS_NETWORK="${INCUS_NETWORK:-incusbr0}"
# An explicit subnet: on hosts without a free one to detect, `incus admin init --minimal` fails.
INCUS_BRIDGE_ADDRESS="${INCUS_BRIDGE_ADDRESS:-10.77.0.1/24}"
LOG_DIR=/var/log/incus

say() { printf 'incus:setup: %s\n' "$*"; }
# INCUS_STORAGE_POOL and ensure_pool: a copy-on-write pool (btrfs on a loop file by default).
. "$(dirname "$0")/incus-storage.sh"
# A process by that name that is alive: a killed one stays a zombie until it is reaped.
running() { ps -C "$1" -o stat= 2>/dev/null | grep -qv '^Z'; }

[ "$(id -u)" -eq 0 ] || { say "run as root"; exit 1; }

install_packages() {
  local missing=()
  command -v incusd >/dev/null 2>&1 || [ -x /usr/libexec/incus/incusd ] || missing+=(incus-base)
  command -v dnsmasq >/dev/null 2>&1 || missing+=(dnsmasq-base)
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  # nft: Incus's firewall driver, and the service's own baseline table (inet svc_guard) beside it.
  command -v nft >/dev/null 2>&1 || missing+=(nftables)
  [ "${#missing[@]}" -eq 0 ] && return
  . /etc/os-release
  local backports="${VERSION_CODENAME}-backports"
  if ! grep -rqs "^deb .* ${backports} " /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian ${backports} main" >/etc/apt/sources.list.d/backports.list
  fi
  say "installing ${missing[*]} from ${backports}"
  apt-get update -qq
  # incus-base: containers only; the full `incus` package adds QEMU for virtual machines.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 -t "$backports" "${missing[@]}" >/dev/null
}

# lxcfs gives containers their own view of /proc (memory, CPUs, uptime). A host whose earlier
# lxcfs was killed keeps its FUSE mount, where every stat fails ("Transport endpoint is not
# connected"): unmount that first. Containers run without lxcfs too, so a failure here only warns.
start_lxcfs() {
  running lxcfs && return
  if ! stat /var/lib/lxcfs >/dev/null 2>&1 && grep -qs ' /var/lib/lxcfs ' /proc/mounts; then
    say "unmounting a stale /var/lib/lxcfs"
    umount -l /var/lib/lxcfs || fusermount -uz /var/lib/lxcfs || true
  fi
  if mkdir -p /var/lib/lxcfs; then
    setsid nohup /usr/bin/lxcfs /var/lib/lxcfs >"$LOG_DIR/lxcfs.log" 2>&1 &
  else
    say "warning: lxcfs not started; containers see the host's /proc figures"
  fi
}

start_daemons() {
  if incus info >/dev/null 2>&1; then return; fi
  if [ -d /run/systemd/system ]; then
    say "starting incus with systemd"
    systemctl start lxcfs incus
  else
    say "starting lxcfs and incusd (no systemd on this host)"
    mkdir -p "$LOG_DIR"
    start_lxcfs
    if ! running incusd; then
      setsid nohup env PATH=/usr/libexec/incus:/usr/sbin:/usr/bin:/sbin:/bin \
        /usr/libexec/incus/incusd --group root --logfile="$LOG_DIR/incus.log" >/dev/null 2>&1 &
    fi
  fi
  /usr/libexec/incus/incusd waitready --timeout=60
}

configure() {
  ensure_pool
  keep_quotas_exact
  incus network show "$INCUS_NETWORK" >/dev/null 2>&1 ||
    incus network create "$INCUS_NETWORK" \
      ipv4.address="$INCUS_BRIDGE_ADDRESS" ipv4.nat=true ipv6.address=none
  local devices
  devices=$(incus profile device list default)
  grep -qx eth0 <<<"$devices" ||
    incus profile device add default eth0 nic network="$INCUS_NETWORK" name=eth0
  keep_bridge_traffic_home
}

# Whenever the bridge's ACL list changes, Incus takes the bridge's address off and puts it back
# (about 12 ms, measured): meanwhile the host has no route to the machines' subnet, and what it
# sends them (the edge's connections, pushes, probes) would leave by the default route to
# whatever holds that address out there. An unreachable route of the lowest priority catches the
# subnet then, so such a connection fails on this host instead. Not kept across a reboot: this
# runs again with every `incus:setup`.
keep_bridge_traffic_home() {
  local subnet
  subnet=$(ip -4 route show dev "$INCUS_NETWORK" proto kernel scope link | awk 'NR == 1 { print $1 }')
  if [ -z "$subnet" ]; then
    say "warning: no route of ${INCUS_NETWORK} found: no fallback route for its subnet"
    return 0
  fi
  ip route replace unreachable "$subnet" metric 4294967295
}

# Each container has host UIDs and GIDs of its own (security.idmap.isolated: 65536 each), taken
# from root's ranges in /etc/subuid and /etc/subgid, which incusd reads when it starts. Debian's
# package gives root 1,000,000,000 (about 15,000 machines); where root has under 10,000,000, a
# range of 1,000,000,000 is added after every range the file holds (none is changed or removed).
ensure_idmap_ranges() {
  local file size start added=0
  for file in /etc/subuid /etc/subgid; do
    touch "$file"
    size=$(awk -F: '$1 == "root" && $3 > max { max = $3 } END { print max + 0 }' "$file")
    [ "$size" -ge 10000000 ] && continue
    start=$(awk -F: '$2 + $3 > end { end = $2 + $3 } END { print (end > 1000000 ? end : 1000000) }' "$file")
    echo "root:${start}:1000000000" >>"$file"
    say "gave root the ids ${start}-$((start + 999999999)) in ${file}"
    added=1
  done
  if [ "$added" = 1 ] && incus info >/dev/null 2>&1; then
    say "warning: restart incusd to use the new ranges (it reads them when it starts)"
  fi
}

# The host's task ids are shared by every machine: each has limits.processes of its own, and the
# kernel's table is raised to its 64-bit maximum so that many full machines still leave it room.
# IPv6 filtering of machines' NICs (security.ipv6_filtering) needs bridged IPv6 to pass
# ip6tables (br_netfilter), as the bridge's ACLs do for IPv4.
tune_kernel() {
  local pid_max
  pid_max=$(cat /proc/sys/kernel/pid_max)
  if [ "$pid_max" -lt 4194304 ]; then
    sysctl -qw kernel.pid_max=4194304 && say "kernel.pid_max ${pid_max} -> 4194304"
  fi
  # Without br_netfilter the bridge's ACLs never see traffic between two machines: root in one
  # would reach every port of the other. Kept across reboots, and the service refuses to start
  # without it.
  # modprobe fails where the module is built in or the kernel's modules are not visible (a
  # container): what counts is that the kernel has it.
  modprobe br_netfilter 2>/dev/null || true
  if [ ! -e /proc/sys/net/bridge/bridge-nf-call-ip6tables ]; then
    say "error: cannot load br_netfilter: machines' firewalls would not filter traffic between them"
    exit 1
  fi
  local modules=/etc/modules-load.d/svc-br_netfilter.conf sysctls=/etc/sysctl.d/60-svc-bridge.conf
  mkdir -p /etc/modules-load.d /etc/sysctl.d
  [ "$(cat "$modules" 2>/dev/null)" = br_netfilter ] || echo br_netfilter >"$modules"
  local wanted=$'net.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1'
  [ "$(cat "$sysctls" 2>/dev/null)" = "$wanted" ] || printf '%s\n' "$wanted" >"$sysctls"
  for key in net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
    [ "$(sysctl -n "$key")" = 1 ] || sysctl -qw "$key=1"
  done
}

install_packages
ensure_idmap_ranges
tune_kernel
start_daemons
configure
# Debian 12 and the Agent image, where missing (Debian's archive is all this needs; the other OS
# images come from an image server: `npm run admin -- images sync`).
bash "$(dirname "$0")/incus-images.sh" build --quick
say "ready: pool ${INCUS_STORAGE_POOL}, network ${INCUS_NETWORK} (${INCUS_BRIDGE_ADDRESS})"
