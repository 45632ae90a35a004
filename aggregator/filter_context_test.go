package aggregator

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The context a user saves with a typical filter: the byte size of
// tools/list (which a client sends its model with every request) for a
// realistic config, before and after. The servers list the tools of the
// real ones (the reference filesystem server, GitHub's, a SQL database
// server) with definitions shaped like theirs: a description of 150 to
// 300 characters and 2 to 4 described parameters. Run with -v to see the
// numbers.
func TestFiltersSaveContext(t *testing.T) {
	t.Parallel()
	servers := map[string][]string{
		"fs": {"read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
			"create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
			"search_files", "get_file_info", "list_allowed_directories"},
		"github": {"add_issue_comment", "add_pull_request_review_comment_to_pending_review", "assign_copilot_to_issue",
			"create_and_submit_pull_request_review", "create_branch", "create_issue", "create_or_update_file",
			"create_pending_pull_request_review", "create_pull_request", "create_repository", "delete_file",
			"delete_pending_pull_request_review", "dismiss_notification", "fork_repository", "get_code_scanning_alert",
			"get_commit", "get_file_contents", "get_issue", "get_issue_comments", "get_me", "get_notification_details",
			"get_pull_request", "get_pull_request_comments", "get_pull_request_diff", "get_pull_request_files",
			"get_pull_request_reviews", "get_pull_request_status", "get_secret_scanning_alert", "get_tag",
			"list_branches", "list_code_scanning_alerts", "list_commits", "list_issues", "list_notifications",
			"list_pull_requests", "list_secret_scanning_alerts", "list_tags", "manage_notification_subscription",
			"mark_all_notifications_read", "merge_pull_request", "push_files", "request_copilot_review",
			"search_code", "search_issues", "search_repositories", "search_users", "submit_pending_pull_request_review",
			"update_issue", "update_pull_request", "update_pull_request_branch"},
		"db": {"read_query", "write_query", "create_table", "alter_table", "drop_table", "list_tables", "describe_table", "append_insight"},
	}
	filters := map[string]string{
		"fs":     `"excludeTools": ["write_file", "edit_file", "create_directory", "move_file"]`,
		"github": `"includeTools": ["get_me", "get_issue", "list_issues", "search_issues", "create_issue", "add_issue_comment", "get_pull_request", "list_pull_requests", "get_pull_request_diff", "create_pull_request", "get_file_contents", "search_code"]`,
		"db":     `"disabledTools": ["write_query", "create_table", "alter_table", "drop_table"]`,
	}
	start := func(s config.Server) (Process, error) {
		return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			result := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}`
			if m.Method == "tools/list" {
				result = realisticTools(servers[s.Key])
			}
			if m.IsRequest() {
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result)))
			}
		}), nil
	}
	size := func(withFilters bool) (bytes, tools int) {
		var entries []config.Server
		for _, key := range []string{"fs", "github", "db"} {
			f := `"excludeTools": null`
			if withFilters {
				f = filters[key]
			}
			entries = append(entries, filtered(t, key, f))
		}
		h := serveEntries(t, Options{Start: start}, entries...)
		h.exchange(initLine)
		line := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		return len(line), strings.Count(line, `"inputSchema"`)
	}
	before, all := size(false)
	after, kept := size(true)
	t.Logf("tools/list for a filesystem, a GitHub and a database server: %d tools, %d bytes; with a typical filter: %d tools, %d bytes (%.0f%% less context on every model request)",
		all, before, kept, after, 100*(1-float64(after)/float64(before)))
	if all != 72 || kept != 26 || after >= before*6/10 {
		t.Errorf("%d tools (%d bytes) filtered to %d (%d bytes): want 72 to 26, and less than 60%% of the bytes", all, before, kept, after)
	}
}

// realisticTools is a tools/list result for the names, each defined as
// real servers define theirs.
func realisticTools(names []string) string {
	var defs []string
	for i, name := range names {
		words := strings.ReplaceAll(name, "_", " ")
		desc := fmt.Sprintf("%s. %s Use this when the user asks to %s; the result is returned as structured content and as text. Only works within the configured scope; errors name the resource that failed.",
			strings.ToUpper(words[:1])+words[1:], strings.Repeat("Handles paths, identifiers and pagination as the API does. ", 1+i%3), words)
		props := []string{`"owner":{"type":"string","description":"Repository owner or the directory to work in"}`,
			`"name":{"type":"string","description":"Name of the item: a repository, a file path or a table"}`,
			`"page":{"type":"number","description":"Page number for pagination (min 1)"}`,
			`"perPage":{"type":"number","description":"Results per page for pagination (min 1, max 100)"}`}[:2+i%3]
		defs = append(defs, fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object","properties":{%s},"required":["name"]},"annotations":{"title":%q,"readOnlyHint":%v}}`,
			name, desc, strings.Join(props, ","), words, strings.HasPrefix(name, "get") || strings.HasPrefix(name, "list")))
	}
	return `{"tools":[` + strings.Join(defs, ",") + `]}`
}
