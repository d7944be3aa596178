import ArgumentParser
import Foundation
import Hummingbird
import Logging
import OpenRealm
import OpenRealmServer
import ServiceLifecycle

/// A to-do HTTP service whose realm is owned by a `RealmActor`, run as a `RealmService`.
///
/// ```sh
/// swift run --package-path Examples TodoServer --port 8080 --realm todos.realm
/// ```
///
/// SIGTERM or SIGINT shut it down gracefully: it stops accepting connections, lets the
/// requests in flight finish (their writes commit and answer), ends the event streams,
/// then the realm service closes the realm, and it exits 0.
@main
struct TodoServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A to-do HTTP service on OpenRealm: CRUD, queries and server-sent change events.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 takes any free port (the one taken is printed).")
    var port = 8080

    @Option(help: "The realm file.")
    var realm = "todos.realm"

    @Option(help: "Seconds graceful shutdown may take before what is left is cancelled.")
    var shutdownTimeout = 10

    func run() async throws {
        var logger = Logging.Logger(label: "TodoServer")
        logger.logLevel = .info
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: realm), objectTypes: [Todo.self])
        // The realm logs its opening, migrations, slow commits and errors to `logger`.
        let realmService = RealmService(configuration: configuration, logger: logger)
        let store = realmService.actor
        // Opened now so that a damaged or mismatched file stops the service before it listens,
        // instead of failing its first request.
        try await store.read { _ in }

        let router = Router()
        // Added before the routes: middleware applies to the endpoints added after it.
        router.add(middleware: RealmErrorMiddleware())
        TodoRoutes(store: store).register(on: router)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "TodoServer"),
            onServerRunning: { [host] channel in
                // Scripts read the port from this line (with --port 0 it is the only way to know it),
                // so it is flushed at once: fflush(nil) flushes every stream without naming the
                // global `stdout`, which Swift 6 refuses.
                print("listening on http://\(host):\(channel.localAddress?.port ?? 0)")
                fflush(nil)
            },
            logger: logger
        )
        // Graceful shutdown goes in reverse order: the server stops and answers every request
        // it took first, then the realm service waits for writes in flight and closes the realm.
        var groupConfiguration = ServiceGroupConfiguration(services: [realmService, app], gracefulShutdownSignals: [.sigterm, .sigint],
                                                           logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(shutdownTimeout)
        try await ServiceGroup(configuration: groupConfiguration).run()
        print("stopped")
    }
}
