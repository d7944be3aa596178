import ExampleSupport
import ArgumentParser
import Foundation
import OpenRealm

/// Streams a large NDJSON file of sensor readings into a realm in batches, resumably.
///
/// ```sh
/// swift run -c release --package-path Examples Ingest --input readings.ndjson --rows 1000000
/// ```
///
/// Each batch is one `RealmActor.write` that stores the batch's rows and moves the file's
/// `IngestCursor` past them: both are in one transaction, so after a crash or a SIGKILL the
/// realm holds exactly the rows before the cursor, and the next run seeks there and goes on.
/// Every row has its `id` as primary key, so a row stored twice would fail its write
/// (`duplicatePrimaryKey`) instead of passing unnoticed.
@main
struct Ingest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ingests an NDJSON file into a realm in batches; resumes where a killed run stopped.")

    @Option(help: "The NDJSON input; generated with --rows lines when it does not exist.")
    var input = "readings.ndjson"

    @Option(help: "Lines to generate when the input does not exist.")
    var rows = 200_000

    @Option(help: "The realm file.")
    var realm = "ingest.realm"

    @Option(help: "Rows per write transaction.")
    var batch = 5_000

    @Flag(help: "Only generate the input (when it does not exist), then exit.")
    var generateOnly = false

    @Flag(help: "After ingesting, check that the realm holds one row per line of the input; exit 1 if not.")
    var verify = false

    func validate() throws {
        guard rows > 0 else { throw ValidationError("--rows must be positive") }
        guard batch > 0 else { throw ValidationError("--batch must be positive") }
    }

    func run() async throws {
        let inputPath = URL(fileURLWithPath: input).standardizedFileURL.path
        if !FileManager.default.fileExists(atPath: inputPath) {
            try Generator.write(rows: rows, to: inputPath)
            print("generated \(inputPath): \(Format.count(rows)) lines, \(Format.mebibytes(try Self.size(of: inputPath)))")
        }
        if generateOnly { return }

        let store = RealmActor(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: realm),
                                                                 objectTypes: [Reading.self, IngestCursor.self]))
        let job = try await IngestJob(store: store, inputPath: inputPath, batchSize: batch)
        try await job.run()
        if verify { try await Self.verify(store: store, inputPath: inputPath) }
        await store.close()
    }

    static func size(of path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// Counts the input's lines and the realm's rows: they must be equal, and the cursor must
    /// say it reached the end.
    private static func verify(store: RealmActor, inputPath: String) async throws {
        var reader = try LineReader(path: inputPath, offset: 0)
        var lines = 0
        while try reader.next() != nil { lines += 1 }
        let (stored, cursorLines) = try await store.read { realm in
            (realm.objects(Reading.self).count, realm.object(ofType: IngestCursor.self, forPrimaryKey: inputPath)?.lines ?? 0)
        }
        guard stored == lines, cursorLines == lines else {
            print("verify FAILED: \(Format.count(stored)) rows in the realm, cursor at line \(Format.count(cursorLines)), "
                  + "\(Format.count(lines)) lines in the input")
            throw ExitCode.failure
        }
        print("verified: \(Format.count(stored)) rows in the realm, one per line of the input")
    }
}

/// Ingestion of one input file into the store, from the cursor the realm holds.
struct IngestJob {
    let store: RealmActor
    let inputPath: String
    let batchSize: Int
    let fileSize: Int
    /// Where the realm's cursor was when this run began.
    let startOffset: Int
    let startLine: Int
    let finished: Bool

    init(store: RealmActor, inputPath: String, batchSize: Int) async throws {
        self.store = store
        self.inputPath = inputPath
        self.batchSize = batchSize
        fileSize = try Ingest.size(of: inputPath)
        let cursor = try await store.read { realm in
            realm.object(ofType: IngestCursor.self, forPrimaryKey: inputPath).map(CursorState.init)
        }
        if let cursor, cursor.fileSize != fileSize {
            throw IngestError("\(inputPath) is \(fileSize) bytes, but was \(cursor.fileSize) when its ingestion began: "
                              + "it is not the same file. Ingest it into another realm, or delete this one")
        }
        startOffset = cursor?.offset ?? 0
        startLine = cursor?.lines ?? 0
        finished = cursor?.finished ?? false
    }

    /// A cursor's values, read on the actor and sent back from it.
    private struct CursorState: Sendable {
        let offset: Int
        let lines: Int
        let fileSize: Int
        let finished: Bool

        init(_ cursor: IngestCursor) {
            (offset, lines, fileSize, finished) = (cursor.offset, cursor.lines, cursor.fileSize, cursor.finished)
        }
    }

    func run() async throws {
        if finished {
            print("\(inputPath) was ingested already: \(Format.count(startLine)) lines")
            return
        }
        if startLine > 0 { print("resuming at line \(Format.count(startLine)) (byte \(Format.count(startOffset)))") }
        let clock = ContinuousClock()
        let began = clock.now
        var progress = Progress(fileSize: fileSize, startOffset: startOffset)
        var reader = try LineReader(path: inputPath, offset: startOffset)
        let decoder = JSONDecoder()
        var line = startLine
        // The previous batch's write, awaited only after the next batch is parsed: parsing
        // and committing overlap, while one write at a time keeps the batches, and so the
        // cursor, in file order.
        var pending: Task<Void, Error>?
        var pendingEnd = (offset: startOffset, lines: startLine)
        var done = false
        while !done {
            var rows: [Row] = []
            rows.reserveCapacity(batchSize)
            while rows.count < batchSize, let bytes = try reader.next() {
                line += 1
                do {
                    rows.append(try decoder.decode(Row.self, from: Data(bytes)))
                } catch {
                    // The batches before this line are stored: let the one in flight finish, so
                    // that a rerun after the line is fixed starts right here.
                    try await pending?.value
                    throw IngestError("line \(line) of \(inputPath) is not a reading: \(error)")
                }
            }
            done = rows.count < batchSize
            let (batchRows, end, lines, isLast) = (rows, reader.offset, line, done)
            if let previous = pending {
                try await previous.value
                progress.committed(offset: pendingEnd.offset, lines: pendingEnd.lines,
                                   rate: Double(pendingEnd.lines - startLine) / Self.seconds(since: began, clock))
            }
            pendingEnd = (end, lines)
            pending = Task { [store, inputPath, fileSize] in
                try await store.write { realm in
                    for row in batchRows {
                        let reading = Reading()
                        reading.id = row.id
                        reading.sensor = row.sensor
                        reading.time = Date(timeIntervalSince1970: row.time)
                        reading.value = row.value
                        realm.add(reading)
                    }
                    let cursor = realm.object(ofType: IngestCursor.self, forPrimaryKey: inputPath) ?? {
                        let cursor = IngestCursor()
                        cursor.path = inputPath
                        cursor.fileSize = fileSize
                        realm.add(cursor)
                        return cursor
                    }()
                    cursor.offset = end
                    cursor.lines = lines
                    cursor.finished = isLast
                }
            }
        }
        try await pending?.value
        let seconds = Self.seconds(since: began, clock)
        progress.committed(offset: pendingEnd.offset, lines: pendingEnd.lines, rate: Double(pendingEnd.lines - startLine) / seconds)
        progress.finish(lines: line)
        let stored = line - startLine
        let bytes = reader.offset - startOffset
        print("done: \(Format.count(line)) lines of \(inputPath) (\(Format.mebibytes(fileSize))) are in the realm")
        print("this run: \(Format.count(stored)) rows, \(Format.mebibytes(bytes)) in \(String(format: "%.2f", seconds)) s: "
              + "\(Format.count(Int(Double(stored) / max(seconds, 1e-9)))) rows/s, "
              + "\(String(format: "%.1f", Double(bytes) / 1_048_576 / max(seconds, 1e-9))) MiB/s")
    }

    static func seconds(since start: ContinuousClock.Instant, _ clock: ContinuousClock) -> Double {
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

struct IngestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
