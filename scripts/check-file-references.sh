#!/usr/bin/env bash
# Fails when a comment or a doc names a Swift file that does not exist.
#
# Comments point readers at other files by name ("the commit path, Store+Commit.swift"), and a
# file renamed, moved or split leaves such a pointer behind, naming nothing. This finds every
# `Name.swift` or `Name+Concern.swift` (or `Folder/Name.swift`) in the comments of the Swift
# files under Sources/, Tests/, Benchmarks/ and Examples/, and anywhere in the living docs: the
# DocC articles (Sources/OpenRealm/OpenRealm.docc), README.md, Examples/README.md and docs/.
# A bare name must be the name of some Swift file in the repository (build folders aside); a
# name with folders must end the path of one (`Allocator/FreeSpace.swift` fails once the file
# moves to another folder). Each that does not is printed as file:line: name, and the script
# exits 1.
#
# Only comments count in Swift files (from `//` to the end of the line: doc comments too): a
# file name in code is data, such as a path a test writes. BENCHMARKS.md is a dated record of
# runs and is left as written. Names of other projects' files that comments cite on purpose
# are listed in EXTERNAL below. Bash and grep only, so that CI needs nothing the Swift image
# lacks.
#
#   scripts/check-file-references.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# A file name, with the folders written before it if any, ending at a word boundary (so that
# `Self.swiftValue` in a comment is not `Self.swift`).
NAME='([A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+(\+[A-Za-z0-9_]+)?\.swift\b'

# Files of other projects, named on purpose: "citing-file name".
EXTERNAL=(
    # Realm Swift's own sources, which the page was checked against.
    "Sources/OpenRealm/OpenRealm.docc/ComingFromRealmSwift.md RealmSwift/Realm.swift"
    "Sources/OpenRealm/OpenRealm.docc/ComingFromRealmSwift.md RealmConfiguration.swift"
    "Sources/OpenRealm/OpenRealm.docc/ComingFromRealmSwift.md Error.swift"
)
declare -A IS_EXTERNAL=()
for entry in "${EXTERNAL[@]}"; do
    IS_EXTERNAL["$entry"]=1
done

# Every Swift file of the repository (outside build and package-manager folders), under each
# of its path's tails: Sources/RealmStorage/Nodes/NodeFormat.swift is also
# RealmStorage/Nodes/NodeFormat.swift, Nodes/NodeFormat.swift and NodeFormat.swift.
declare -A EXISTS=()
while IFS= read -r path; do
    tail=${path#./}
    while :; do
        EXISTS["$tail"]=1
        [[ "$tail" == */* ]] || break
        tail=${tail#*/}
    done
done < <(find . \( -name .build -o -name .git -o -name .swiftpm \) -prune -o -type f -name '*.swift' -print)

# Lines that may name a file, as file:line:text: the Swift files' lines with a comment that
# names one, and the docs' lines that name one.
scan() {
    local roots=() docs=()
    for root in Sources Tests Benchmarks Examples; do
        [ -d "$root" ] && roots+=("$root")
    done
    for doc in Sources/OpenRealm/OpenRealm.docc README.md Examples/README.md docs; do
        [ -e "$doc" ] && docs+=("$doc")
    done
    grep -rnE --include='*.swift' --exclude-dir=.build "//.*$NAME" "${roots[@]}" || true
    grep -rnE --include='*.md' "$NAME" "${docs[@]}" || true
}

missing=0
while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    text=${rest#*:}
    # A URL's file name is another project's (github.com/groue/GRDB.swift), and its `//` does
    # not open a comment.
    while [[ "$text" =~ [A-Za-z]+://[^[:space:]\"\'\)\>]* ]]; do
        text=${text/"${BASH_REMATCH[0]}"/}
    done
    # In a Swift file, only what follows the first `//` is a comment.
    case "$file" in
        *.swift) text=${text#*//} ;;
    esac
    while IFS= read -r name; do
        [ -n "$name" ] || continue
        # `./Name.swift` and `../Folder/Name.swift` name the same file as without the dots.
        while [[ "$name" == ./* || "$name" == ../* ]]; do
            name=${name#*/}
        done
        if [ -z "${EXISTS[$name]:-}" ] && [ -z "${IS_EXTERNAL["$file $name"]:-}" ]; then
            echo "$file:$line: $name names no file in the repository" >&2
            missing=$((missing + 1))
        fi
    done < <(grep -oE "$NAME" <<<"$text" || true)
done < <(scan)

if [ "$missing" -gt 0 ]; then
    echo "check-file-references: $missing reference(s) to files that do not exist; point each at the file that now holds what it names" >&2
    exit 1
fi
echo "check-file-references: every Swift file a comment or doc names exists" >&2
