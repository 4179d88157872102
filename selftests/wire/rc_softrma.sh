#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/wire/rc_interop.sh with softrma on both guests.
PEER=softrma
. "$(dirname "$0")/rc_interop.sh"
