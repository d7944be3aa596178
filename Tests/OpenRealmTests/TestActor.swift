/// An actor for tests that keep a live realm across `await`: a realm opened outside any actor
/// is confined to its thread, and an async test may resume on another thread after a
/// suspension. A realm opened in a `@TestActor` test belongs to this actor instead.
@globalActor actor TestActor {
    static let shared = TestActor()
}
