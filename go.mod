module github.com/mcp-simple-aggregator/mcp-simple-aggregator

go 1.23
