# shellcheck shell=bash
# cswap: tests/vm/pki.sh — sourced: certificates for nbdkit's and
# nbd-client's TLS, made with openssl in the guest.
#
# pki DIR CA NAME: a key and a certificate for NAME (localhost, with
# 127.0.0.1) signed by the CA in DIR/CA-cert.pem (made if missing), as
# DIR/NAME-key.pem and DIR/NAME-cert.pem.  With CA "ca" and NAME
# "server", DIR holds the files `nbdkit --tls-certificates=DIR` reads.
pki () {
  local dir=$1 ca=$2 name=$3
  [ -e "$dir/$ca-cert.pem" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
    -nodes -keyout "$dir/$ca-key.pem" -out "$dir/$ca-cert.pem" -days 2 -subj "/CN=$ca" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/$name-key.pem" \
    -out "$dir/$name.csr" -subj "/CN=localhost" 2>/dev/null &&
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca-cert.pem" -CAkey "$dir/$ca-key.pem" \
    -CAcreateserial -out "$dir/$name-cert.pem" -days 2 \
    -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n') 2>/dev/null
}
