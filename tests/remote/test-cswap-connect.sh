#!/bin/bash
# cswap: cswap-connect's bad input and failures, on a host without the
# nbd driver (the VM test vm-remote connects for real): every option form
# the help shows, refused with exit 2 when malformed; and against real
# servers on 127.0.0.1 each failure names its cause with exit 1: nothing
# listening, a server that is not NBD, one that refuses STARTTLS, a
# server certificate of another CA or for another name, a client
# certificate the server does not take, malformed replies.  With the right files the TLS
# handshake succeeds and it fails further on, at kernel TLS (this host's
# kernel has none) or at the nbd driver, never at the handshake.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/tap.sh
source "$here/../lib/tap.sh"
# shellcheck source=../vm/pki.sh
source "$here/../vm/pki.sh"

build=${CSWAP_BUILD_ROOT:?run through meson test}
connect=$build/remote/cswap-connect
command -v nbdkit >/dev/null || skip "nbdkit is not installed"
command -v openssl >/dev/null || skip "openssl is not installed"
work=$(mktemp -d /tmp/test-cswap-connect.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# A free TCP port on 127.0.0.1.
free_port () { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$work/pki" "$work/other"
pki "$work/pki" ca server && pki "$work/pki" ca client && pki "$work/other" ca client \
  || skip "openssl could not make the certificates"
client=(--certfile "$work/pki/client-cert.pem" --keyfile "$work/pki/client-key.pem"
        --cacertfile "$work/pki/ca-cert.pem" --tlshostname localhost)

# start_nbdkit PORT ARGS…: nbdkit with the memory plugin on 127.0.0.1:PORT.
start_nbdkit () {
  local port=$1; shift
  nbdkit --foreground -i 127.0.0.1 -p "$port" --pidfile "$work/$port.pid" "$@" memory 16M \
    2>"$work/$port.log" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/$port.pid" ] && return 0; sleep 0.1; done
  return 1
}

# Usage errors: exit 2, with the reason.
check "--help exits 0 with the usage" exits 0 "Usage: cswap-connect" "$connect" --help
check "-h too" exits 0 "Usage: cswap-connect" "$connect" -h
check "--version and -V say the version" \
  eval '"$connect" --version | grep -q "^cswap-connect [0-9]" && "$connect" -V | grep -q "^cswap-connect "'
check "no arguments: exit 2" exits 2 "HOST PORT /dev/nbdN are needed" "$connect"
check "two arguments: exit 2" exits 2 "HOST PORT /dev/nbdN are needed" "$connect" h 1
check "an unknown option: exit 2" exits 2 "Usage" "$connect" --frobnicate h 1 /dev/nbd0
for form in "--connections 0" "--connections=17" "-C abc" "-C -1" "--timeout 0" \
            "-t 1x" "--timeout=99999999999" "--persist 0" "--persist=9x" "-p -5"; do
  # shellcheck disable=SC2086  # the form is two words or one
  check "$form: exit 2, not a number in range" \
    exits 2 "(want 1\.\." "$connect" $form h 1 /dev/nbd0
done
check "--certfile without --keyfile: exit 2" \
  exits 2 "go together" "$connect" --certfile "$work/pki/client-cert.pem" h 1 /dev/nbd0
for tls_option in "--cacertfile f" "--certfile f --keyfile k" "--tlshostname n"; do
  # shellcheck disable=SC2086  # the option and its value
  check "--no-tls with $tls_option: exit 2" \
    exits 2 "no-tls takes none of the TLS options" "$connect" --no-tls $tls_option h 1 /dev/nbd0
done
check "--keyfile without --certfile: exit 2" \
  exits 2 "go together" "$connect" --keyfile "$work/pki/client-key.pem" h 1 /dev/nbd0
for device in /dev/sda /dev/nbd /dev/nbdx /dev/nbd1x nbd0; do
  check "device $device: exit 2, not /dev/nbdN" exits 2 "not /dev/nbdN" "$connect" h 1 "$device"
done
check "a missing CA file: exit 1, named" \
  exits 1 "$work/nosuch.pem" "$connect" --cacertfile "$work/nosuch.pem" h 1 /dev/nbd0
check "a key that is not the certificate's: exit 1, named" \
  exits 1 "client-cert.pem" "$connect" --certfile "$work/pki/client-cert.pem" \
    --keyfile "$work/pki/server-key.pem" h 1 /dev/nbd0

# Servers that fail it.
port=$(free_port)
check "nothing listening: exit 1, connection refused" \
  exits 1 "127.0.0.1:$port: Connection refused" "$connect" "${client[@]}" 127.0.0.1 "$port" /dev/nbd0
check "an unknown host: exit 1, named" \
  exits 1 "nosuch.invalid" "$connect" "${client[@]}" nosuch.invalid 10809 /dev/nbd0

junk_port=$(free_port)
/usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
while True:
    c, _ = s.accept(); c.sendall(b"HTTP/1.0 200 OK\r\n\r\nnot nbd at all"); c.close()' "$junk_port" &
pids+=($!)
sleep 0.5
check "a server that is not NBD: exit 1, said so" \
  exits 1 "not a fixed newstyle NBD server" "$connect" "${client[@]}" 127.0.0.1 "$junk_port" /dev/nbd0

# fake_nbd PORT MAGIC LENGTH: a server on PORT that greets as NBD does,
# then answers NBD_OPT_STARTTLS with a reply of that magic and length.
fake_nbd () {
  /usr/bin/python3 -c '
import socket, struct, sys
port, magic, length = (int(a, 0) for a in sys.argv[1:])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen()
while True:
    c, _ = s.accept()
    c.sendall(b"NBDMAGIC" + struct.pack(">QH", 0x49484156454F5054, 3))
    c.recv(4); c.recv(16)
    c.sendall(struct.pack(">QIII", magic, 5, 1, length)); c.close()' "$@" &
  pids+=($!)
}
fake_port=$(free_port) huge_port=$(free_port)
fake_nbd "$fake_port" 0x1234 0
fake_nbd "$huge_port" 0x3e889045565a9 $((1 << 30))
sleep 0.5
check "a reply of the wrong magic: exit 1, malformed" \
  exits 1 "NBD_OPT_STARTTLS: a malformed reply" "$connect" "${client[@]}" 127.0.0.1 "$fake_port" /dev/nbd0
check "a reply claiming 1 GiB: exit 1, malformed, nothing allocated for it" \
  exits 1 "NBD_OPT_STARTTLS: a malformed reply" "$connect" "${client[@]}" 127.0.0.1 "$huge_port" /dev/nbd0

plain_port=$(free_port)
start_nbdkit "$plain_port" --tls=off || skip "nbdkit did not start: $(cat "$work/$plain_port.log")"
check "a server without TLS: exit 1, it refused STARTTLS" \
  exits 1 "refused NBD_OPT_STARTTLS" "$connect" "${client[@]}" 127.0.0.1 "$plain_port" /dev/nbd0
check "--no-tls to it: the handshake succeeds; it fails at the nbd driver" \
  exits 1 "generic netlink family nbd\|NBD_CMD_CONNECT" \
    "$connect" --no-tls 127.0.0.1 "$plain_port" /dev/nbd0
check "--persist: the watcher's failure reaches the caller, exit 1, and nothing stays" \
  eval '"$connect" --no-tls --persist 5 127.0.0.1 "$plain_port" /dev/nbd0 2>"$work/persist.err"
        [ $? -eq 1 ] && grep -q "generic netlink family nbd\|NBD_CMD_CONNECT" "$work/persist.err" \
        && sleep 0.2 && ! pgrep -f "cswap-connect --no-tls --persist" >/dev/null'

tls_port=$(free_port)
start_nbdkit "$tls_port" --tls=require --tls-certificates="$work/pki" --tls-verify-peer \
  || skip "nbdkit did not start: $(cat "$work/$tls_port.log")"
check "a server certificate of another CA: exit 1, the certificate's fault" \
  exits 1 "the server's certificate" "$connect" "${client[@]:0:4}" \
    --cacertfile "$work/other/ca-cert.pem" --tlshostname localhost 127.0.0.1 "$tls_port" /dev/nbd0
check "a server certificate for another name: exit 1, hostname mismatch" \
  exits 1 "hostname mismatch" "$connect" "${client[@]:0:6}" --tlshostname example.com \
    127.0.0.1 "$tls_port" /dev/nbd0
check "the address as the name: its certificate carries 127.0.0.1, so not a mismatch" \
  eval '! "$connect" "${client[@]:0:6}" 127.0.0.1 "$tls_port" /dev/nbd0 2>&1 | grep -q "certificate"'
check "a client certificate of another CA: exit 1, the handshake" \
  exits 1 "TLS handshake" "$connect" --certfile "$work/other/client-cert.pem" \
    --keyfile "$work/other/client-key.pem" --cacertfile "$work/pki/ca-cert.pem" \
    --tlshostname localhost 127.0.0.1 "$tls_port" /dev/nbd0
check "the right files: the handshake succeeds; it fails at kernel TLS or the nbd driver" \
  exits 1 "the kernel did not take the TLS session\|generic netlink family nbd\|NBD_CMD_CONNECT" \
    "$connect" "${client[@]}" 127.0.0.1 "$tls_port" /dev/nbd0
check "and the server is still serving" kill -0 "${pids[-1]}"

# No core dump while the TLS key is in memory (--persist keeps it for as
# long as the device).  A server that accepts and says nothing holds it
# there.  Run as nobody where this is root: a process that is not
# dumpable has its /proc files owned by root, whoever runs it.
silent_port=$(free_port)
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
c, _ = s.accept(); time.sleep(60)' "$silent_port" &
pids+=($!)
for _ in $(seq 100); do
  ss -ltn "( sport = :$silent_port )" | grep -q 127.0.0.1 && break
  sleep 0.1
done
as_user=() keys=$work/pki
if [ "$(id -u)" -eq 0 ]; then
  keys=$work/nobody
  chmod 711 "$work"
  mkdir "$work/nobody" && cp "$work/pki/"*.pem "$work/nobody/" && chown -R nobody "$work/nobody"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
"${as_user[@]}" "$connect" --certfile "$keys/client-cert.pem" \
  --keyfile "$keys/client-key.pem" --cacertfile "$keys/ca-cert.pem" \
  --tlshostname localhost --timeout 60 127.0.0.1 "$silent_port" /dev/nbd0 2>/dev/null &
waiting=$!
pids+=($waiting)
for _ in $(seq 50); do
  ss -tn state established "( dport = :$silent_port )" | grep -q 127.0.0.1 && break
  sleep 0.1
done
check "with the key loaded it is not dumpable (its /proc files are root's)" \
  test "$(stat -c %u "/proc/$waiting/status")" -eq 0
check "its core file size limit is 0" \
  grep -q "^Max core file size *0 *0 " "/proc/$waiting/limits"
check "and its coredump_filter 0" test "$(cat "/proc/$waiting/coredump_filter")" = 00000000
done_testing
