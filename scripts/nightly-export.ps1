# nightly-export.ps1: uploads one ERP export to Mirador and waits for its import (Windows).
#
#   $env:MIRADOR_URL = 'https://mirador.example.com'
#   $env:MIRADOR_UPLOAD_TOKEN = 'upl_xxxxxxxx_...'
#   powershell -NoProfile -ExecutionPolicy Bypass -File nightly-export.ps1 clientes C:\ERP\export\clientes.csv
#
# The same steps and exit status as nightly-export.sh: the file is gzip-compressed (a .gz
# file is sent as it is), uploaded with curl.exe and the upload token, and the status URL
# the upload answers is polled. 0: the import succeeded; 1: it failed, the upload was
# refused, or it did not end in time; 3: it is held for confirmation by a guard.
# Needs Windows PowerShell 5.1 or PowerShell 7, and curl.exe (part of Windows 10 1803 and later).
param(
  [Parameter(Mandatory = $true)][string]$Kind,
  [Parameter(Mandatory = $true)][string]$File,
  [int]$PollSeconds = 5,
  [int]$TimeoutSeconds = 3600
)
$ErrorActionPreference = 'Stop'

function Fail([string]$Message, [int]$Code = 1) {
  [Console]::Error.WriteLine("nightly-export: $Message")
  exit $Code
}

$url = $env:MIRADOR_URL
$token = $env:MIRADOR_UPLOAD_TOKEN
if (-not $url) { Fail 'set MIRADOR_URL to the Mirador base URL' }
if (-not $token) { Fail 'set MIRADOR_UPLOAD_TOKEN to an upload token (mirador token create <slug>)' }
if (-not (Test-Path -LiteralPath $File -PathType Leaf)) { Fail "cannot read $File" }
$url = $url.TrimEnd('/')
$source = (Resolve-Path -LiteralPath $File).Path

$work = Join-Path ([IO.Path]::GetTempPath()) ('mirador-' + [Guid]::NewGuid())
New-Item -ItemType Directory -Path $work | Out-Null
try {
  # The token goes to curl.exe in a file, never on its command line (visible to other users).
  $auth = Join-Path $work 'auth'
  [IO.File]::WriteAllText($auth, "header = `"Authorization: Bearer $token`"`n")

  $name = Split-Path -Leaf $source
  if ($name -like '*.gz') {
    $body = $source
  } else {
    $name = "$name.gz"
    $body = Join-Path $work $name
    $in = [IO.File]::OpenRead($source)
    $out = [IO.File]::Create($body)
    $gzip = New-Object IO.Compression.GZipStream($out, [IO.Compression.CompressionMode]::Compress)
    try { $in.CopyTo($gzip) } finally { $gzip.Dispose(); $out.Dispose(); $in.Dispose() }
  }

  $uploadJson = Join-Path $work 'upload.json'
  $target = "$url/panel/api/imports/$Kind" + '?filename=' + [Uri]::EscapeDataString($name)
  $status = & curl.exe -sS -K $auth -X PUT -T $body -H 'Content-Encoding: gzip' --retry 3 --retry-delay 10 -o $uploadJson -w '%{http_code}' $target
  if ($LASTEXITCODE -ne 0) { Fail "upload of $File failed (curl.exe exit $LASTEXITCODE)" }
  if ($status -ne '202') { Fail "upload of $File refused (HTTP $status): $(Get-Content -Raw $uploadJson)" }
  $upload = Get-Content -Raw $uploadJson | ConvertFrom-Json
  $id = $upload.import_id
  Write-Output "nightly-export: $File queued as import $id of $Kind"

  $statusJson = Join-Path $work 'status.json'
  $waited = 0
  while ($true) {
    Start-Sleep -Seconds $PollSeconds
    $waited += $PollSeconds
    $code = & curl.exe -sS -K $auth -o $statusJson -w '%{http_code}' $upload.status_url
    if ($LASTEXITCODE -ne 0) { $code = '000' }
    if ($code -eq '200') {
      $job = (Get-Content -Raw $statusJson | ConvertFrom-Json).import
      if ($job.status -eq 'succeeded') { Write-Output "nightly-export: import $id succeeded"; exit 0 }
      if ($job.status -eq 'awaiting_confirmation') {
        Fail "import $id is held for confirmation (a guard stopped it; the previous data stays): $($upload.status_url)" 3
      }
      if ($job.status -eq 'failed' -or $job.status -eq 'rejected') { Fail "import $id $($job.status): $($job.error)" }
    } elseif ($code -eq '401' -or $code -eq '403' -or $code -eq '404') {
      Fail "cannot follow import $id (HTTP $code): $(Get-Content -Raw $statusJson)"
    }
    # Anything else (the server restarting, a proxy hiccup): keep polling until the timeout.
    if ($waited -ge $TimeoutSeconds) { Fail "import $id had not ended after $TimeoutSeconds s: $($upload.status_url)" }
  }
} finally {
  Remove-Item -Recurse -Force -LiteralPath $work -ErrorAction SilentlyContinue
}
