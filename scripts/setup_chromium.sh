#!/usr/bin/env bash
# The report's browser tests open `dkg report` in Debian's Chromium. Install it when it
# is missing and apt can (as root: CI's fresh machine); otherwise those tests skip and say why.
set -uo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing Chromium (Debian's package) for the report's browser tests" >&2
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; then
    exit 0
  fi
fi
echo "setup: no Chromium (install Debian's chromium as root); the report's browser tests will skip" >&2
