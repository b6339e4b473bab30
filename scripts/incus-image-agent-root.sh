#!/usr/bin/env bash
# mmdebstrap customize hook of the Agent image: `incus-image-agent-root.sh <root>`. The runtime is
# already in <root>/opt/svc (bin/node, svc.mjs and what it loads). Adds the user `agent` (uid
# 1000, passwordless sudo: the machine is theirs) whose home is the Agent's home, `svc` and `node`
# on every PATH, and `svc gateway` as a system service, enabled.
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
Environment=SVC_GATEWAY_HOST=0.0.0.0 SVC_GATEWAY_PORT=8443 SVC_GATEWAY_BUILTIN_EDITOR=true
ExecStart=/usr/local/bin/svc gateway
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/svc-gateway.service \
  "$root/etc/systemd/system/multi-user.target.wants/svc-gateway.service"
