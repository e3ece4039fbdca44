#!/bin/sh
# nightly-export.sh: uploads one ERP export to Mirador and waits for its import.
#
#   MIRADOR_URL=https://mirador.example.com MIRADOR_UPLOAD_TOKEN=upl_xxxxxxxx_... \
#     nightly-export.sh clientes /srv/erp/export/clientes.csv
#
# The file is gzip-compressed on the way (a .gz file is sent as it is), uploaded with
# the upload token, and the status URL the upload answers is polled until the import
# ends. Exit status: 0 the import succeeded (the data is live); 1 it failed, or the
# upload was refused, or it did not end in time; 3 it is held for confirmation by a
# guard (nothing changed for readers until someone confirms it in the panel or with
# "mirador imports <slug> confirm <id>"). Needs sh, curl, gzip, sed, mktemp.
#
# Optional: MIRADOR_POLL_SECONDS (default 5), MIRADOR_TIMEOUT_SECONDS (default 3600).
set -eu

usage() { echo "usage: MIRADOR_URL=... MIRADOR_UPLOAD_TOKEN=... $0 <kind> <file.csv|file.csv.gz>" >&2; exit 1; }
[ $# -eq 2 ] || usage
kind=$1
file=$2
url=${MIRADOR_URL:?set MIRADOR_URL to the Mirador base URL}
token=${MIRADOR_UPLOAD_TOKEN:?set MIRADOR_UPLOAD_TOKEN to an upload token (mirador token create <slug>)}
poll=${MIRADOR_POLL_SECONDS:-5}
timeout=${MIRADOR_TIMEOUT_SECONDS:-3600}
[ -r "$file" ] || { echo "nightly-export: cannot read $file" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The token goes to curl in a private file, never on its command line (visible in ps).
printf 'header = "Authorization: Bearer %s"\n' "$token" > "$work/auth"

name=$(basename "$file")
case "$name" in
  *.gz) body=$file ;;
  *) body="$work/$name.gz"; gzip -c -- "$file" > "$body"; name="$name.gz" ;;
esac
# The name only labels the import in the history: keep it to characters a URL carries as they are.
name=$(printf '%s' "$name" | tr -c 'A-Za-z0-9._-' '_')

# One JSON value of a compact response: the first "key":"text" or "key":bare at top level
# or in "import" (the report, further on, repeats some keys; the first is the import's).
json_field() {
  tr ',' '\n' < "$1" | sed -n "s/^[{]*\"$2\":\"\{0,1\}\([^\",}]*\)\"\{0,1\}[}]*\$/\1/p" | sed -n 1p
}

status=$(curl -sS -K "$work/auth" -X PUT -T "$body" -H 'Content-Encoding: gzip' \
  --retry 3 --retry-delay 10 -o "$work/upload.json" -w '%{http_code}' \
  "$url/panel/api/imports/$kind?filename=$name") || { echo "nightly-export: upload of $file failed (curl)" >&2; exit 1; }
if [ "$status" != 202 ]; then
  echo "nightly-export: upload of $file refused (HTTP $status): $(cat "$work/upload.json")" >&2
  exit 1
fi
status_url=$(json_field "$work/upload.json" status_url)
id=$(json_field "$work/upload.json" import_id)
echo "nightly-export: $file queued as import $id of $kind"

waited=0
while :; do
  sleep "$poll"
  waited=$((waited + poll))
  code=$(curl -sS -K "$work/auth" -o "$work/status.json" -w '%{http_code}' "$status_url") || code=000
  case "$code" in
    200)
      state=$(json_field "$work/status.json" status)
      case "$state" in
        succeeded) echo "nightly-export: import $id succeeded"; exit 0 ;;
        awaiting_confirmation)
          echo "nightly-export: import $id is held for confirmation (a guard stopped it; the previous data stays): $status_url" >&2
          exit 3 ;;
        failed | rejected)
          echo "nightly-export: import $id $state: $(cat "$work/status.json")" >&2
          exit 1 ;;
      esac ;;
    401 | 403 | 404)
      echo "nightly-export: cannot follow import $id (HTTP $code): $(cat "$work/status.json")" >&2
      exit 1 ;;
    *) ;; # the server restarting, a proxy hiccup: keep polling until the timeout
  esac
  if [ "$waited" -ge "$timeout" ]; then
    echo "nightly-export: import $id had not ended after $timeout s: $status_url" >&2
    exit 1
  fi
done
