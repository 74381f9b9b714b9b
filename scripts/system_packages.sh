#!/usr/bin/env bash
# The Debian packages `make setup` and `make check` need beyond Python and make.
#
#   scripts/system_packages.sh                    # all of them (make check)
#   scripts/system_packages.sh venv npm           # only these (make setup: `python3 -m venv`, npm)
#   scripts/system_packages.sh --check-only ...   # never install; what a test or a dry look uses
#
# Each needed command comes from one Debian package; Redmine's packages give no command on PATH,
# so they are asked of dpkg by name. When every command is on PATH it prints
# nothing and exits 0. When some are missing: as root (and not --check-only) it runs
# `apt-get update` once and installs them, noninteractive; otherwise it prints the exact command
# that installs them and exits 1, before anything else runs.
set -euo pipefail

# command -> the Debian package that provides it, and what needs it. `venv` is not a command:
# it is Python's venv module with ensurepip, which Debian ships apart from python3.
declare -A PACKAGE=(
  [venv]=python3-venv
  [npm]=npm
  [chromium]=chromium
  [chromedriver]=chromium-driver
  [prometheus-pushgateway]=prometheus-pushgateway
  [promtool]=prometheus
  [redmine]=redmine
  [redmine-sqlite]=redmine-sqlite
  [ruby-webrick]=ruby-webrick
)
declare -A NEEDED_BY=(
  [venv]="make setup: python3 -m venv"
  [npm]="make setup: axe-core for the review page's accessibility test"
  [chromium]="the review page's browser tests"
  [chromedriver]="the review page's browser tests"
  [prometheus-pushgateway]="tests/metrics/test_metrics_push.py"
  [promtool]="tests/k8s/test_k8s_prometheusrule.py"
  [redmine]="tests/statehub/backends/test_redmine_*.py: a real Redmine"
  [redmine-sqlite]="tests/statehub/backends/test_redmine_*.py: Redmine on SQLite"
  [ruby-webrick]="tests/statehub/backends/test_redmine_*.py: the server Redmine runs in"
)
DEBIAN_ONLY=(redmine redmine-sqlite ruby-webrick)  # packages, not commands: asked of dpkg
ORDER=(npm chromium chromedriver prometheus-pushgateway promtool "${DEBIAN_ONLY[@]}")

present() {
  if [[ "$1" == venv ]]; then
    "${PYTHON:-python3}" -c 'import ensurepip, venv' >/dev/null 2>&1
  elif [[ " ${DEBIAN_ONLY[*]} " == *" $1 "* ]]; then
    dpkg -s "$1" >/dev/null 2>&1
  else
    command -v "$1" >/dev/null 2>&1
  fi
}

check_only=0
wanted=()
for arg in "$@"; do
  case "$arg" in
    --check-only) check_only=1 ;;
    -*) echo "system_packages.sh: unknown option $arg (the only one is --check-only)" >&2; exit 2 ;;
    *)
      if [[ -z "${PACKAGE[$arg]+set}" ]]; then
        echo "system_packages.sh: unknown command $arg (known: venv ${ORDER[*]})" >&2
        exit 2
      fi
      wanted+=("$arg")
      ;;
  esac
done
if [[ ${#wanted[@]} -eq 0 ]]; then
  wanted=("${ORDER[@]}")
fi

missing=()
packages=()
for cmd in "${wanted[@]}"; do
  if ! present "$cmd"; then
    missing+=("$cmd")
    pkg="${PACKAGE[$cmd]}"
    if [[ " ${packages[*]-} " != *" $pkg "* ]]; then
      packages+=("$pkg")
    fi
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

install="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${packages[*]}"
if [[ $check_only -eq 0 && $EUID -eq 0 ]]; then
  echo "installing Debian packages: ${packages[*]}" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${packages[@]}"
  exit 0
fi

{
  echo "missing system packages (Debian):"
  for cmd in "${missing[@]}"; do
    echo "  $cmd (package ${PACKAGE[$cmd]}): ${NEEDED_BY[$cmd]}"
  done
  if [[ $EUID -eq 0 ]]; then
    echo "install them with:"
    echo "  $install"
  else
    echo "install them as root (or run make as root, which installs them):"
    echo "  sudo sh -c '$install'"
  fi
} >&2
exit 1
