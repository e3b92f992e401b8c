#!/usr/bin/env bash
# Builds the libFuzzer targets under Tests/Fuzz/<name>/ against FormModel (and SyncCore, TerminalUI's input decoder,
# the XLSForm reader with ZIPFoundation from SwiftPM's checkout) compiled with coverage and AddressSanitizer, then runs each for FUZZ_SECONDS (default 60) from the seed
# corpus in Tests/Fuzz/corpus/<name>/. Work files go to .build-fuzz/ (the seeds are never changed); a crash
# leaves its input in .build-fuzz/artifacts/<name>/ and makes the script exit 1. Leak detection is off:
# LeakSanitizer does not see pointers Swift keeps in the spare bits of enum payloads, and reported the
# form schema held for the whole run (built once, at the first input) as leaked.
#
#   Tests/Fuzz/run.sh                 # every target, FUZZ_SECONDS each
#   Tests/Fuzz/run.sh expression json # some of them
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=.build-fuzz
SWIFTC=${SWIFTC:-swiftc}
FLAGS=(-O -g -sanitize=fuzzer,address -parse-as-library -package-name fieldsheet)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(expression json form pattern input sync xlsform)
mkdir -p "$OUT/modules"

# FormModel (with the JSON reader and writer) and the terminal input decoder as instrumented modules (object files linked into each target).
# ZIPFoundation (the XLSForm reader's zip archives) imports zlib through its CZlib module map.
ZIP=.build/checkouts/ZIPFoundation
ZLIB=(-I "$ZIP/Sources/CZLib")
build_module() {  # name sources...
    local name=$1; shift
    "$SWIFTC" "${FLAGS[@]}" -wmo -module-name "$name" -I "$OUT/modules" "${ZLIB[@]}" -emit-module -emit-module-path "$OUT/modules/$name.swiftmodule" \
        -c -o "$OUT/modules/$name.o" "$@"
}
# FormModel compiles in Schema/form-definition.schema.json; the build plugin's tool writes it, as in SwiftPM.
echo "building FormModel with -sanitize=fuzzer,address"
"$SWIFTC" -O Plugins/SchemaConstantsTool/main.swift -o "$OUT/schema-constants"
"$OUT/schema-constants" Schema/form-definition.schema.json "$OUT/FormDefinitionSchema.swift" FormDefinitionSchema
build_module FormModel $(find Sources/FormModel -name '*.swift' | sort) "$OUT/FormDefinitionSchema.swift"
# SyncCore signs and seals with swift-crypto: its modules and objects are taken, uninstrumented, from SwiftPM's
# debug build (make build or make test), which compiles BoringSSL's C sources with the package's own settings.
DEBUG=.build/debug
CRYPTO_SOURCES=.build/checkouts/swift-crypto/Sources
CRYPTO=(-I "$DEBUG/Modules" -I "$CRYPTO_SOURCES/CCryptoBoringSSL/include" -I "$CRYPTO_SOURCES/CCryptoBoringSSLShims/include")
CRYPTO_OBJECTS=()
if [[ " ${TARGETS[*]} " == *" sync "* ]]; then
    if [ ! -d "$DEBUG/Crypto.build" ] || [ ! -f "$DEBUG/Modules/Crypto.swiftmodule" ]; then
        echo "the sync target needs swift-crypto from SwiftPM's debug build: run 'make build' (or swift build) first" >&2
        exit 2
    fi
    while IFS= read -r object; do CRYPTO_OBJECTS+=("$object"); done < <(find "$DEBUG/Crypto.build" "$DEBUG/CryptoBoringWrapper.build" \
        "$DEBUG/CCryptoBoringSSL.build" "$DEBUG/CCryptoBoringSSLShims.build" -name '*.o' | sort)
    echo "building SyncCore (the byte codec of the sync shapes)"
    build_module SyncCore "${CRYPTO[@]}" $(find Sources/SyncCore -name '*.swift' | sort)
fi
echo "building TerminalUI's input decoder"
build_module TerminalUI Sources/TerminalUI/Input/*.swift
if [[ " ${TARGETS[*]} " == *" xlsform "* ]]; then
    [ -d "$ZIP/Sources/ZIPFoundation" ] || swift package resolve
    echo "building ZIPFoundation and XLSForm (the workbook reader and converter)"
    # (its package defines _GNU_SOURCE, for fopencookie)
    build_module ZIPFoundation -Xcc -D_GNU_SOURCE=1 $(find "$ZIP/Sources/ZIPFoundation" -name '*.swift' | sort)
    build_module XLSForm $(find Sources/XLSForm -name '*.swift' | sort)
fi

status=0
for name in "${TARGETS[@]}"; do
    objects=("$OUT/modules/FormModel.o")
    [ "$name" = input ] && objects+=("$OUT/modules/TerminalUI.o")
    [ "$name" = sync ] && objects+=("$OUT/modules/SyncCore.o" "${CRYPTO_OBJECTS[@]}")
    [ "$name" = xlsform ] && objects+=("$OUT/modules/XLSForm.o" "$OUT/modules/ZIPFoundation.o" -lz)
    echo "building fuzz-$name"
    # (gold warns about every ASan helper symbol it cannot export; those lines are noise)
    "$SWIFTC" "${FLAGS[@]}" -I "$OUT/modules" "${ZLIB[@]}" "${CRYPTO[@]}" Tests/Fuzz/"$name"/*.swift "${objects[@]}" -o "$OUT/fuzz-$name" \
        2> >(grep -v "Cannot export local symbol" >&2)
    mkdir -p "$OUT/corpus/$name" "$OUT/artifacts/$name"
    log="$OUT/fuzz-$name.log"
    echo "fuzzing $name for ${SECONDS_EACH}s (log: $log)"
    if ! ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" "$OUT/fuzz-$name" "$OUT/corpus/$name" "Tests/Fuzz/corpus/$name" \
        -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -detect_leaks=0 \
        -artifact_prefix="$OUT/artifacts/$name/" -print_final_stats=1 > "$log" 2>&1; then
        echo "fuzz-$name FAILED: see $log and $OUT/artifacts/$name/"
        grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5 || true
        status=1
    fi
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz-$name: ${runs:-?} inputs in ${SECONDS_EACH}s, corpus $(ls "$OUT/corpus/$name" | wc -l) files"
done
exit $status
