#!/usr/bin/env bash
# Builds the examples once (debug) and runs each of them for a few seconds against real input:
# TodoServer driven over HTTP with curl, Ingest killed part way and resumed, LoadTest for two
# seconds. Fails on the first failure. `.ci/run` calls it; run it by hand the same way:
#   Examples/ci.sh
set -euo pipefail
cd "$(dirname "$0")"

swift build
BIN="$(swift build --show-bin-path)"
WORK="$(mktemp -d)"
SERVER_PID=""
EVENTS_PID=""
INGEST_PID=""
cleanup() {
    for pid in $SERVER_PID $EVENTS_PID $INGEST_PID; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "examples: FAILED: $*" >&2
    for log in "$WORK"/*.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -n 40 "$log" >&2; }; done
    exit 1
}

# Waits up to $2 seconds (in tenths) for `$1` (a command) to succeed.
wait_for() {
    local tries=$(( $2 * 10 ))
    until eval "$1"; do
        tries=$(( tries - 1 ))
        [ "$tries" -gt 0 ] || return 1
        sleep 0.1
    done
}

# ---------------------------------------------------------------- TodoServer
echo "examples: TodoServer"
"$BIN/TodoServer" --port 0 --realm "$WORK/todos.realm" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
wait_for "grep -q '^listening on ' '$WORK/server.log'" 60 || fail "TodoServer did not start"
URL="$(sed -n 's/^listening on //p' "$WORK/server.log" | head -n 1)"

# request METHOD PATH BODY EXPECTED_STATUS [TEXT_THE_BODY_MUST_CONTAIN]
request() {
    local status
    local data=()
    [ -n "$3" ] && data=(--data "$3")
    status="$(curl -sS -o "$WORK/body" -w '%{http_code}' -X "$1" -H 'content-type: application/json' "${data[@]}" "$URL$2")" \
        || fail "$1 $2: curl failed"
    [ "$status" = "$4" ] || fail "$1 $2 $3: status $status, expected $4: $(cat "$WORK/body")"
    if [ -n "${5:-}" ]; then
        grep -qF -- "$5" "$WORK/body" || fail "$1 $2 $3: body $(cat "$WORK/body") lacks $5"
    fi
}

request GET /health "" 200 ok
# The change stream, open for the rest of the test (and through the shutdown).
: > "$WORK/events.txt"
curl -sSN "$URL/todos/events" > "$WORK/events.txt" 2>/dev/null &
EVENTS_PID=$!
wait_for "grep -q '^event: snapshot' '$WORK/events.txt'" 10 || fail "no snapshot event on /todos/events"

request POST /todos '{"id":1,"title":"Buy milk","priority":2,"tags":["home"]}' 201 '"title":"Buy milk"'
wait_for "grep -q '\"inserted\":\[{\"done\":false,\"id\":1,' '$WORK/events.txt'" 10 || fail "no change event after a POST"
request POST /todos '{"id":1,"title":"Again"}' 409 duplicatePrimaryKey
request POST /todos '{"id":' 400
request POST /todos '{"id":2}' 400
request POST /todos '{"id":2,"title":""}' 400 invalidTitle
request POST /todos '{"id":2,"title":"x","priority":9}' 400 invalidPriority
request GET /todos/1 "" 200 '"tags":["home"]'
request GET /todos/999 "" 404 notFound
request GET /todos/abc "" 400
request PATCH /todos/1 '{"done":true}' 200 '"done":true'
request PATCH /todos/999 '{"done":true}' 404 notFound
request PATCH /todos/1 '{"done":"yes"}' 400
request PUT /todos/2 '{"id":2,"title":"Write report","done":false,"priority":5}' 201 '"priority":5'
request PUT /todos/2 '{"id":2,"title":"Write the report","done":false,"priority":4}' 200 '"title":"Write the report"'
request PUT /todos/2 '{"id":3,"title":"Wrong id","done":false,"priority":1}' 400 idMismatch
request PUT /todos/2 '{"id":2,"title":"No priority","done":false}' 400 invalidJSON
request POST /todos '{"id":3,"title":"Call the bank","priority":3}' 201
request POST /todos '{"id":4,"title":"Buy bread","priority":1,"tags":["home","shop"]}' 201
request GET '/todos?done=false&sort=priority&order=desc' "" 200 '"total":3'
grep -qF '"items":[{"done":false,"id":2,' "$WORK/body" || fail "query not sorted by priority: $(cat "$WORK/body")"
request GET '/todos?q=buy&limit=1' "" 200 '"total":2'
request GET '/todos?filter=priority%20%3E%3D%203%20AND%20tags.@count%20%3D%3D%200' "" 200 '"total":2'
request GET '/todos?filter=priority%20%3E%3E%203' "" 400 invalidQuery
request GET '/todos?sort=colour' "" 400 invalidParameter
request GET '/todos?minPriority=many' "" 400 invalidParameter
request DELETE /todos/1 "" 204
request DELETE /todos/1 "" 404 notFound
wait_for "grep -q '\"deleted\":\[1\]' '$WORK/events.txt'" 10 || fail "no change event after a DELETE"
request GET /health "" 200 ok

# SIGTERM with the event stream still open and two clients writing: the server must let the
# writes in flight finish, end the stream, stop and exit 0; every write it acknowledged (201)
# must be in the realm when it starts again.
for writer in 1 2; do
    ( for i in $(seq 1 1000); do
          code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
              --data "{\"id\":$(( writer * 10000 + i )),\"title\":\"load $i\"}" "$URL/todos" || true)"
          echo "$code"
          # 000: no answer; the server has stopped listening.
          [ "$code" != 000 ] || break
      done > "$WORK/writer-$writer.txt" 2>/dev/null ) &
done
wait_for "[ \$(cat '$WORK'/writer-*.txt 2>/dev/null | grep -c '^201') -ge 10 ]" 20 || fail "the writers got no 201"
kill -TERM "$SERVER_PID"
wait_for "! kill -0 $SERVER_PID 2>/dev/null" 20 || fail "TodoServer still running 20 s after SIGTERM"
status=0
wait "$SERVER_PID" || status=$?
SERVER_PID=""
[ "$status" = 0 ] || fail "TodoServer exited with $status after SIGTERM"
grep -q '^stopped' "$WORK/server.log" || fail "TodoServer did not close its realm"
wait_for "! kill -0 $EVENTS_PID 2>/dev/null" 5 || fail "the event stream stayed open after shutdown"
EVENTS_PID=""
wait  # for the writers, which stop at their first unanswered request
grep -qv '^\(201\|000\)$' "$WORK"/writer-*.txt && fail "a write during shutdown got $(grep -v '^\(201\|000\)$' "$WORK"/writer-*.txt | head -n 1)"
ACKNOWLEDGED="$(cat "$WORK"/writer-*.txt | grep -c '^201')"
"$BIN/TodoServer" --port 0 --realm "$WORK/todos.realm" > "$WORK/server-again.log" 2>&1 &
SERVER_PID=$!
wait_for "grep -q '^listening on ' '$WORK/server-again.log'" 60 || fail "TodoServer did not start again"
URL="$(sed -n 's/^listening on //p' "$WORK/server-again.log" | head -n 1)"
request GET '/todos?filter=id%20%3E%3D%2010000&limit=1' "" 200
STORED="$(sed -n 's/.*"total":\([0-9]*\).*/\1/p' "$WORK/body")"
# At least: a write may also commit while its client is being refused, never the reverse.
[ "${STORED:-0}" -ge "$ACKNOWLEDGED" ] || fail "$ACKNOWLEDGED writes acknowledged during shutdown, $STORED stored"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || fail "TodoServer exited with $? after its second SIGTERM"
SERVER_PID=""
echo "examples: TodoServer passed ($(grep -c '^event: ' "$WORK/events.txt") events; $ACKNOWLEDGED writes acknowledged during shutdown, $STORED stored)"

# ---------------------------------------------------------------- Ingest
echo "examples: Ingest"
INPUT="$WORK/readings.ndjson"
"$BIN/Ingest" --input "$INPUT" --rows 60000 --generate-only > "$WORK/generate.log" 2>&1 || fail "Ingest could not generate its input"
LINES="$(wc -l < "$INPUT" | tr -d ' ')"
"$BIN/Ingest" --input "$INPUT" --realm "$WORK/ingest.realm" --batch 1000 > "$WORK/ingest-killed.log" 2>&1 &
INGEST_PID=$!
# SIGKILL right after the first batch is durable: the rest is still to come.
wait_for "grep -q '^committed' '$WORK/ingest-killed.log'" 60 || fail "Ingest committed no batch"
kill -KILL "$INGEST_PID"
wait "$INGEST_PID" 2>/dev/null || true
INGEST_PID=""
grep -q '^done' "$WORK/ingest-killed.log" && fail "Ingest finished before it was killed: give it more --rows"
"$BIN/Ingest" --input "$INPUT" --realm "$WORK/ingest.realm" --batch 1000 --verify > "$WORK/ingest-resumed.log" 2>&1 \
    || fail "the resumed Ingest failed"
grep -q '^resuming at line ' "$WORK/ingest-resumed.log" || fail "Ingest did not resume"
# Ingest checks the count itself (--verify); this compares it with wc's count too.
STORED="$(sed -n 's/^verified: \([0-9,]*\) rows.*/\1/p' "$WORK/ingest-resumed.log" | tr -d ,)"
[ "$STORED" = "$LINES" ] || fail "the realm holds ${STORED:-no} rows, the input has $LINES lines"
echo "examples: Ingest passed: $(sed -n 's/^resuming at //p' "$WORK/ingest-resumed.log"), $LINES lines in all"

# ---------------------------------------------------------------- LoadTest
echo "examples: LoadTest"
"$BIN/LoadTest" --seconds 2 --tasks 4 --objects 2000 > "$WORK/loadtest.log" 2>&1 || fail "LoadTest failed"
grep -q '^check: ' "$WORK/loadtest.log" || fail "LoadTest did not check its writes"
cat "$WORK/loadtest.log"
echo "examples: all passed"
