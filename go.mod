module corral

go 1.26.8

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/mattn/go-sqlite3 v1.14.53 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/yuin/goldmark v1.8.7 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
