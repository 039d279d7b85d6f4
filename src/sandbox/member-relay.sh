#!/bin/sh
# A sandboxed team session's relay to its member socket (sandbox/member-relay.ts). The sandbox runtime runs this in
# place of its apply-seccomp helper, inside the sandbox and before the seccomp filter, as:
#   member-relay.sh SHELL -c COMMAND
# It starts socat on 127.0.0.1:$CLAUDE_SESSIONS_RELAY_PORT (the sandbox's own network) relaying to the one socket
# $CLAUDE_SESSIONS_RELAY_SOCKET (the launcher's, bound into the sandbox), waits until it listens (at most ~1 s),
# then runs the real apply-seccomp, which filters every Unix socket for the command and everything it starts.
socat=$CLAUDE_SESSIONS_RELAY_SOCAT
port=$CLAUDE_SESSIONS_RELAY_PORT
sock=$CLAUDE_SESSIONS_RELAY_SOCKET
seccomp=$CLAUDE_SESSIONS_SECCOMP
unset CLAUDE_SESSIONS_RELAY_SOCAT CLAUDE_SESSIONS_RELAY_PORT CLAUDE_SESSIONS_RELAY_SOCKET CLAUDE_SESSIONS_SECCOMP
if [ -z "$seccomp" ] || [ ! -x "$seccomp" ]; then
  echo "claude-sessions sandbox: no apply-seccomp to run" >&2
  exit 125
fi
"$socat" "TCP4-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr,backlog=64" "UNIX-CONNECT:$sock" >/dev/null 2>&1 &
relay=$!
hexport=$(printf '%04X' "$port")
i=0
while [ "$i" -lt 100 ] && kill -0 "$relay" 2>/dev/null; do
  grep -q "^ *[0-9]*: 0100007F:$hexport 00000000:0000 0A" /proc/net/tcp 2>/dev/null && break
  sleep 0.01
  i=$((i + 1))
done
exec "$seccomp" "$@"
