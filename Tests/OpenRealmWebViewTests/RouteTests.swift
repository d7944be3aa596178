import Testing
@testable import OpenRealmWebView
