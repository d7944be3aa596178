// The frame every page shares: a title, the file's name, the navigation and the style sheet,
// all inline: the pages load nothing else (no fonts, scripts or images from anywhere), so the
// view works offline and a page saved from the browser stays whole.

/// A rendered page: its status and its document.
struct Page: Sendable {
    var status: Int
    var document: String
}

enum Layout {
    /// The whole document of a page titled `title` showing `body`, for the file `fileName`.
    static func page(title: String, fileName: String, status: Int = 200, body: HTML) -> Page {
        let html: HTML = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · \(fileName)</title>
            <style>\(style)</style>
            </head>
            <body>
            <header><a class="home" href="\(Link.classes)">OpenRealm</a> <span class="file">\(fileName)</span>
            <nav><a href="\(Link.classes)">Classes</a> <a href="\(Link.info)">Info</a></nav>
            <span class="readonly">read-only</span></header>
            <main>
            \(body)
            </main>
            </body>
            </html>

            """
        return Page(status: status, document: html.rendered)
    }

    /// The page for `error`.
    static func errorPage(_ error: PageError, fileName: String) -> Page {
        let body: HTML = """
            <h1>\(error.title)</h1>
            <p class="error" id="error">\(error.message)</p>
            \(error.detail)
            <p><a href="\(Link.classes)">Back to the classes</a></p>
            """
        return page(title: error.title, fileName: fileName, status: Int(error.status.code), body: body)
    }

    // The style sheet, as a literal: template text, inserted as markup.
    private static let style: HTML = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
        header{display:flex;gap:16px;align-items:baseline;padding:10px 20px;background:#27304a;color:#e8ecf6}
        header a{color:#e8ecf6;text-decoration:none}header .home{font-weight:700;font-size:16px}
        header .file{font-family:ui-monospace,monospace;opacity:.85}header nav{display:flex;gap:14px;margin-left:12px}
        header .readonly{margin-left:auto;font-size:12px;border:1px solid #8d97b5;border-radius:9px;padding:0 8px}
        main{padding:12px 20px 28px}h1{font-size:20px;margin:8px 0 12px}h2{font-size:16px;margin:20px 0 8px}
        a{color:#2459c5}table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001;max-width:100%}
        th,td{border:1px solid #dde1ea;padding:4px 8px;text-align:left;vertical-align:top}
        th{background:#eef1f7;font-weight:600;white-space:nowrap}th small{font-weight:400;color:#68708a;margin-left:4px}
        td.num{text-align:right;font-variant-numeric:tabular-nums}.null{color:#9aa1b5;font-style:italic}
        .collection{white-space:nowrap}.muted{color:#68708a}.error{color:#a8201a;font-weight:600}
        form.query{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0 12px;padding:10px;background:#fff;box-shadow:0 1px 2px #0001}
        form.query input[name=q]{flex:1 1 380px;font:13px ui-monospace,monospace;padding:5px}
        form.query input,form.query select,form.query button{padding:4px 6px}
        .predicate{font:13px ui-monospace,monospace;background:#fff;border:1px solid #dde1ea;padding:8px;white-space:pre-wrap}
        .predicate mark{background:#f7c6c3;color:#7a1510;border-bottom:2px solid #a8201a}
        .pager{margin:10px 0;display:flex;gap:12px;align-items:center}
        dl.info{display:grid;grid-template-columns:max-content auto;gap:4px 18px;background:#fff;padding:12px;box-shadow:0 1px 2px #0001}
        dl.info dt{font-weight:600}dl.info dd{margin:0}
        #history{font:13px ui-monospace,monospace;background:#fff;padding:8px 8px 8px 28px;box-shadow:0 1px 2px #0001;min-height:20px}
        #history li{margin:2px 0}.changed{background:#fff3b5}
        """
}
