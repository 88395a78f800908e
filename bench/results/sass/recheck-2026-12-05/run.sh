#!/bin/bash
# usage: run.sh ID SRCDIR -- fuzzgpu-sass-args...
id=$1; dir=$2; shift 3
O=/tmp/recheck/out/$id; mkdir -p $O/keep
cd $dir
export XDG_CACHE_HOME=/tmp/recheck/cache
echo "$(date -u +%FT%TZ) start $id load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/recheck/log
printf '%q ' nice -n 19 python3 -m fuzzgpu sass --keep $O/keep --json --details "$@" > $O/cmd.txt
/usr/bin/time -v -o $O/time.txt nice -n 19 python3 -m fuzzgpu sass --keep $O/keep --json --details "$@" > $O/out.json 2> $O/err.txt
rc=$?; echo $rc > $O/rc
echo "$(date -u +%FT%TZ) end $id rc=$rc load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/recheck/log
