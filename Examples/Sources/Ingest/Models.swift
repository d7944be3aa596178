import Foundation
import OpenRealm

/// One row of the input: a sensor reading.
final class Reading: Object {
    /// The input's `id`: a primary key, so that a row stored twice would fail the write
    /// (`duplicatePrimaryKey`) rather than pass unnoticed.
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var sensor: String
    @Persisted var time: Date
    @Persisted var value: Double
}

/// How far the ingestion of one input file got: written in the same transaction as the rows
/// it counts, so the two can never disagree, whenever the process dies.
final class IngestCursor: Object {
    /// The input's absolute path.
    @Persisted(primaryKey: true) var path: String
    /// Bytes of the input consumed: whole lines only.
    @Persisted var offset: Int
    /// Lines consumed.
    @Persisted var lines: Int
    /// The input's size when ingestion began, to notice a different file under the same name.
    @Persisted var fileSize: Int
    @Persisted var finished: Bool
}

/// A line of the input as decoded, before it is stored: `Sendable`, so a batch of them can be
/// handed to the write closure.
struct Row: Decodable, Sendable {
    let id: Int
    let sensor: String
    /// Seconds since 1970.
    let time: Double
    let value: Double
}
