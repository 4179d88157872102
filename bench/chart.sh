#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The chart of a bench table: for every row of DATA (lines "TOOL SIZE DEV
# VALUE", as bench/guest.sh and bench/wire.sh write them), each device's
# ratio to the reference device REF (bandwidth and rate: DEV/REF; latency:
# REF/DEV; higher is better), as grouped bars on a log scale, with the
# line 1.0 where REF stands.  Needs gnuplot (make deps).
#
# usage: chart.sh DATA REF TITLE OUT.svg
set -eu

[ $# = 4 ] || { sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2; }
data=$1 ref=$2 title=$3 svg=$4
command -v gnuplot >/dev/null || { echo "chart: gnuplot missing (run 'make deps')" >&2; exit 1; }
table=$(mktemp)
trap 'rm -f "$table"' EXIT

# One line per row: its label, then the ratio of each device but REF, in
# the order they first appear ("-" where a value is missing).
awk -v ref="$ref" '
	$1 == "ceiling" { next }
	{
		row = $1 " " $2
		if (!(row in seen)) { seen[row] = 1; rows[++nr] = row }
		if ($3 != ref && !($3 in known)) { known[$3] = 1; devs[++nd] = $3 }
		v[row, $3] = $4
	}
	END {
		printf "row"
		for (d = 1; d <= nd; d++) printf " %s", devs[d]
		print ""
		for (r = 1; r <= nr; r++) {
			split(rows[r], p, " ")
			size = p[2]
			if (p[2] >= 1048576) size = (p[2] / 1048576) "M"
			else if (p[2] >= 1024) size = (p[2] / 1024) "K"
			tool = p[1]
			sub(/^ib_/, "", tool)
			sub(/_bw$/, "", tool)
			sub(/_lat$/, " lat", tool)
			printf "\"%s %s\"", tool, size
			for (d = 1; d <= nd; d++) {
				x = v[rows[r], devs[d]] + 0; y = v[rows[r], ref] + 0
				if (x <= 0 || y <= 0) printf " -"
				else printf " %.3f", (p[1] ~ /_lat$/) ? y / x : x / y
			}
			print ""
		}
	}' "$data" > "$table"

ncols=$(head -n 1 "$table" | wc -w)
gnuplot <<EOF
set terminal svg size 900,420 dynamic noenhanced font "sans,11"
set output "$svg"
set title "$title"
set ylabel "ratio to $ref (higher is better)"
set logscale y
set grid ytics
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set datafile missing "-"
set key top left
set xtics nomirror
set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb "black"
plot for [i=2:$ncols] "$table" using i:xtic(1) title columnheader(i)
EOF
echo "chart: $svg"
