// openrealm: the command-line tool. Its commands live in the OpenRealmTool library
// (Sources/OpenRealmTool), where its tests reach them; `openrealm --help` lists them.
import OpenRealmTool

OpenRealmCommand.main()
