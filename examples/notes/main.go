// Command notes is an example MCP server: a notebook kept in memory for as
// long as the server runs, with the tools add, list, read and delete. It
// speaks MCP over stdin and stdout (examples/internal/mcpserver) and is one
// of the two servers of the demo (examples/demo.json, go run ./examples/demo).
//
//	go run ./examples/notes
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/examples/internal/mcpserver"
)

// notebook is the server's state: notes by title, in the order added.
type notebook struct {
	titles []string
	text   map[string]string
}

const titleSchema = `{"type":"object","properties":{"title":{"type":"string","description":"the note's title"}},"required":["title"]}`

func main() {
	log.SetFlags(0)
	log.SetPrefix("notes: ")
	nb := &notebook{text: make(map[string]string)}
	s := &mcpserver.Server{
		Name:         "notes",
		Version:      "1.0.0",
		Instructions: "Notes kept for this session: add, list, read and delete them by title.",
		Tools: []mcpserver.Tool{
			{
				Name:        "add",
				Description: "Add a note, or replace the note of that title.",
				InputSchema: `{"type":"object","properties":{"title":{"type":"string"},"text":{"type":"string"}},"required":["title","text"]}`,
				Call:        nb.add,
			},
			{Name: "list", Description: "List the titles of all notes.", InputSchema: `{"type":"object"}`, Call: nb.list},
			{Name: "read", Description: "Read the note of a title.", InputSchema: titleSchema, Call: nb.read},
			{Name: "delete", Description: "Delete the note of a title.", InputSchema: titleSchema, Call: nb.delete},
		},
	}
	if err := s.Serve(os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func (nb *notebook) add(args json.RawMessage) (string, error) {
	var a struct{ Title, Text string }
	if err := mcpserver.Args(args, &a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Title) == "" {
		return "", errors.New("a note needs a title")
	}
	if _, ok := nb.text[a.Title]; !ok {
		nb.titles = append(nb.titles, a.Title)
	}
	nb.text[a.Title] = a.Text
	return fmt.Sprintf("Saved %q; notes: %d.", a.Title, len(nb.titles)), nil
}

func (nb *notebook) list(args json.RawMessage) (string, error) {
	if err := mcpserver.Args(args, &struct{}{}); err != nil {
		return "", err
	}
	if len(nb.titles) == 0 {
		return "No notes yet.", nil
	}
	return strings.Join(nb.titles, "\n"), nil
}

func (nb *notebook) read(args json.RawMessage) (string, error) {
	title, err := titleArg(args)
	if err != nil {
		return "", err
	}
	text, ok := nb.text[title]
	if !ok {
		return "", fmt.Errorf("no note titled %q", title)
	}
	return text, nil
}

func (nb *notebook) delete(args json.RawMessage) (string, error) {
	title, err := titleArg(args)
	if err != nil {
		return "", err
	}
	if _, ok := nb.text[title]; !ok {
		return "", fmt.Errorf("no note titled %q", title)
	}
	delete(nb.text, title)
	nb.titles = slices.DeleteFunc(nb.titles, func(t string) bool { return t == title })
	return fmt.Sprintf("Deleted %q.", title), nil
}

// titleArg reads the one argument of read and delete.
func titleArg(args json.RawMessage) (string, error) {
	var a struct{ Title string }
	err := mcpserver.Args(args, &a)
	return a.Title, err
}
