#!/usr/bin/env bash
# The storage pool machines' disks live on, sourced by incus-setup.sh. Copy-on-write by default:
# a btrfs pool on a loop file (clones and snapshots share blocks; a root disk's `size` is a quota
# that writing past fails with "Disk quota exceeded"), made the default profile's root. A `dir`
# pool copies every file and ignores `size`; one made by an earlier setup stays, by its name, for
# the machines already on it.
#   INCUS_STORAGE_POOL    the pool's name (default svc)
#   INCUS_STORAGE_DRIVER  btrfs (default), zfs, lvm or dir
#   INCUS_POOL_SIZE       the loop file's size (e.g. 200GiB); default half the free space under
#                         /var/lib/incus, at least 10GiB and at most 1TiB
#   INCUS_POOL_SOURCE     a block device, a ZFS dataset or a directory to use instead of a loop file

INCUS_STORAGE_POOL="${INCUS_STORAGE_POOL:-svc}"
INCUS_STORAGE_DRIVER="${INCUS_STORAGE_DRIVER:-btrfs}"

# Half of what is free where Incus keeps its loop files, in GiB, within [10, 1024]. The file is
# sparse: it takes only what the machines write, and the size is the most they may write together.
pool_size() {
  if [ -n "${INCUS_POOL_SIZE:-}" ]; then
    echo "$INCUS_POOL_SIZE"
    return
  fi
  local free_gib
  mkdir -p /var/lib/incus
  free_gib=$(df --output=avail -BG /var/lib/incus | tail -n 1 | tr -dc '0-9')
  local half=$((free_gib / 2))
  [ "$half" -lt 10 ] && half=10
  [ "$half" -gt 1024 ] && half=1024
  echo "${half}GiB"
}

# The tools a driver needs on the host (btrfs-progs for btrfs), from Debian's archive.
install_pool_tools() {
  local package
  case "$INCUS_STORAGE_DRIVER" in
  btrfs) command -v mkfs.btrfs >/dev/null 2>&1 && return; package=btrfs-progs ;;
  lvm) command -v lvcreate >/dev/null 2>&1 && return; package=lvm2 ;;
  *) return ;;
  esac
  say "installing ${package} for the ${INCUS_STORAGE_DRIVER} pool"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "$package" >/dev/null
}

ensure_pool() {
  if incus storage show "$INCUS_STORAGE_POOL" >/dev/null 2>&1; then
    local driver
    driver=$(incus storage show "$INCUS_STORAGE_POOL" | awk '$1 == "driver:" { print $2 }')
    [ "$driver" = "$INCUS_STORAGE_DRIVER" ] ||
      say "pool ${INCUS_STORAGE_POOL} exists with driver ${driver} (not ${INCUS_STORAGE_DRIVER}): kept as it is"
  else
    install_pool_tools
    local options=()
    if [ -n "${INCUS_POOL_SOURCE:-}" ]; then
      options+=("source=${INCUS_POOL_SOURCE}")
    elif [ "$INCUS_STORAGE_DRIVER" != dir ]; then
      options+=("size=$(pool_size)")
    fi
    say "creating the ${INCUS_STORAGE_DRIVER} pool ${INCUS_STORAGE_POOL} ${options[*]}"
    incus storage create "$INCUS_STORAGE_POOL" "$INCUS_STORAGE_DRIVER" "${options[@]}"
  fi
  # New instances of the default profile land on it (the service names the pool per machine).
  if incus profile device list default | grep -qx root; then
    incus profile device set default root pool="$INCUS_STORAGE_POOL"
  else
    incus profile device add default root disk path=/ pool="$INCUS_STORAGE_POOL"
  fi
}

# btrfs enforces a root disk's size through quota groups. Deleting a large subvolume (a destroyed
# machine) above the filesystem's drop_subtree_threshold (3 by default) skips the accounting and
# marks every quota group inconsistent, after which no limit holds until a rescan: measured here,
# a 1 GiB machine took 1.5 GiB. The threshold goes to its maximum (deletes keep exact accounts),
# and an inconsistent filesystem is rescanned. The threshold is not kept across a remount: this
# runs again with every `incus:setup`.
keep_quotas_exact() {
  [ "$INCUS_STORAGE_DRIVER" = btrfs ] || return 0
  local mount=/var/lib/incus/storage-pools/${INCUS_STORAGE_POOL} uuid qgroups
  uuid=$(findmnt -no UUID "$mount" 2>/dev/null | head -n 1) || true
  qgroups=/sys/fs/btrfs/${uuid}/qgroups
  if [ -z "$uuid" ] || [ ! -d "$qgroups" ]; then
    say "warning: no quota groups found for the pool at ${mount}: root disk sizes may not hold"
    return 0
  fi
  [ "$(cat "$qgroups/drop_subtree_threshold")" = 8 ] || echo 8 >"$qgroups/drop_subtree_threshold"
  if [ "$(cat "$qgroups/inconsistent")" != 0 ]; then
    say "rescanning the pool's quota groups (they were inconsistent)"
    btrfs quota rescan -w "$mount" >/dev/null
  fi
}
