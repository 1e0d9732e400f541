#!/bin/sh
# Builds the C# SDK (build.sh), then runs its test program: unit tests, the shared targeting vectors and payload
# fixtures, and the scenarios of test/fixtures/sdk/SCENARIOS.md against a real service. With FLAGSTORE_URL and
# FLAGSTORE_KEY set it uses that service; otherwise scripts/with-flagstore.mjs starts one from the built tree
# (`npm run build:service` first). Prints "N passed, M failed" and exits non-zero when anything failed.
# An optional argument runs only the tests whose name contains it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
"$here/build.sh"
cd "$root"
exec node scripts/with-flagstore.mjs mono --debug "$here/build/Flagstore.Tests.exe" "$root" "$@"
