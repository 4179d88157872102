# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# slowdown KVER: how many times slower than Debian's kernels the tests run
# on KVER.  make debug-kernel's kernel (KASAN, lockdep, kmemleak) is about
# 6 times slower; every time limit of the suite, of a test and within one
# (SOFTRMA_SLOWDOWN in the guest) is multiplied by this.
slowdown() {
	case $1 in
	*-softrma-debug) echo 6 ;;
	*) echo 1 ;;
	esac
}
