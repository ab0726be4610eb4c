# Sourced by the Kernel Tuner comparisons (kernel_tuner_compare.sh,
# warm_compare.sh): sets $venv to a venv holding Kernel Tuner 1.5.0 (PyPI),
# $KT_VENV or build/kt-venv, made on first use; exits 3 when it cannot be.
venv=${KT_VENV:-$root/build/kt-venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import kernel_tuner' 2>/dev/null; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q kernel_tuner==1.5.0 || {
    echo "Kernel Tuner cannot be installed into $venv (no PyPI?): the comparison cannot run" >&2
    exit 3
  }
fi
