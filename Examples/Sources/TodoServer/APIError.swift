import Foundation
import Hummingbird
import OpenRealm

/// An error the client caused, sent as `{"error": code, "message": …}` with its status.
struct APIError: HTTPResponseError {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    private struct Body: Encodable {
        let error: String
        let message: String
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let data = try JSON.encode(Body(error: code, message: message))
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns the `Realm.Error`s that bad data causes, and bodies that do not decode, into 4xx
/// responses in one format.
///
/// OpenRealm throws these from the write (`RealmActor.write` or `asyncWrite`) that met the
/// data, having undone that write alone (docs/DIFFERENCES.md, "Data and resource problems
/// throw"), so the server goes on; any other error is the server's, a 500 that Hummingbird
/// writes without details.
struct RealmErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status.kind == .clientError {
            // Hummingbird's own 4xx (a body or a path parameter that does not decode), in
            // this service's error format.
            throw APIError(error.status, error.status.code == 400 ? "badRequest" : "clientError",
                           error.body ?? error.status.reasonPhrase)
        } catch let error as DecodingError {
            // Bodies decoded in a write (`PUT` decodes its `Todo` there); Hummingbird's
            // `request.decode` turns its own decoding errors into 400s already.
            throw APIError(.badRequest, "invalidJSON", "the body is not a valid todo: \(error)")
        } catch let error as Realm.Error {
            switch error.code {
            case .duplicatePrimaryKey:
                throw APIError(.conflict, error.code.rawValue, error.message)
            case .invalidQuery:
                throw APIError(.badRequest, error.code.rawValue, error.message)
            case .valueTooLarge, .invalidArgument:
                throw APIError(.unprocessableContent, error.code.rawValue, error.message)
            default:
                context.logger.error("realm error: \(error)")
                throw error
            }
        }
    }
}
