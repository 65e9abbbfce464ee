# cswap: sourced by the benchmark scripts: the page file they read when
# not told, as meson.build chooses it.
# shellcheck shell=bash

# default_corpus TOP: $CSWAP_CORPUS, else the large corpus beside the
# repository TOP (../shared/corpus/anon-pages.zst) when it is there, else
# the sample of it the repository carries (tests/data/cut-corpus).
default_corpus () {
  local large=$1/../shared/corpus/anon-pages.zst
  if [[ -n ${CSWAP_CORPUS:-} ]]; then
    echo "$CSWAP_CORPUS"
  elif [[ -f $large ]]; then
    echo "$large"
  else
    echo "$1/tests/data/anon-pages-sample.zst"
  fi
}
