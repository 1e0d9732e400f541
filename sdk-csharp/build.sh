#!/bin/sh
# Builds the C# SDK with Debian's Mono (mono-devel): sdk-csharp/build/Flagstore.dll, one assembly referencing only
# mscorlib, System, System.Core and System.Net.Http, the test program sdk-csharp/build/Flagstore.Tests.exe,
# and the README's first example as sdk-csharp/build/ReadmeExample.exe.
# C# 7.2 as `mcs -langversion:7.2` takes it (what Unity's compiler also accepts); no NuGet package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/build"
mkdir -p "$out"
refs="-r:System.dll -r:System.Core.dll -r:System.Net.Http.dll"
# -noconfig: no default references beyond mscorlib; the ones above are all the SDK may use.
mcs -langversion:7.2 -noconfig -nologo -warnaserror+ -debug- -optimize+ -target:library -out:"$out/Flagstore.dll" \
  -doc:"$out/Flagstore.xml" -nowarn:1591 $refs "$here"/src/*.cs
mcs -langversion:7.2 -noconfig -nologo -warnaserror+ -target:exe -out:"$out/Flagstore.Tests.exe" \
  -r:"$out/Flagstore.dll" $refs "$here"/tests/*.cs
# Flagstore.dll may reference mscorlib, System, System.Core and System.Net.Http and nothing else (Unity, no NuGet):
# the test program's check, run here so that the build itself fails on a new reference.
FLAGSTORE_SKIP_SCENARIOS=1 mono "$out/Flagstore.Tests.exe" "$here/.." "references only" > "$out/references.log" || {
  cat "$out/references.log" >&2
  exit 1
}
# The README's first C# block (from nothing to reading a flag) compiles as it stands; the tests run it.
awk '/^```csharp$/ { if (!done) { inside = 1; next } } /^```$/ { if (inside) { inside = 0; done = 1 } } inside' "$here/README.md" > "$out/ReadmeExample.cs"
(cd "$out" && mcs -langversion:7.2 -nologo -warnaserror+ -target:exe -out:ReadmeExample.exe -r:Flagstore.dll ReadmeExample.cs)
echo "built $out/Flagstore.dll, $out/Flagstore.Tests.exe and $out/ReadmeExample.exe; references checked"
