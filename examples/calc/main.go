// Command calc is an example MCP server: a calculator with the tools add,
// subtract, multiply and divide. Results are rounded to CALC_PRECISION
// decimal places (default 4). It speaks MCP over stdin and stdout
// (examples/internal/mcpserver) and is one of the two servers of the demo
// (examples/demo.json, go run ./examples/demo).
//
//	go run ./examples/calc
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"strconv"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/examples/internal/mcpserver"
)

const pairSchema = `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`

func main() {
	log.SetFlags(0)
	log.SetPrefix("calc: ")
	precision := 4
	if v := os.Getenv("CALC_PRECISION"); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 15 {
			log.Fatalf("CALC_PRECISION=%q: want a number of decimal places from 0 to 15", v)
		}
		precision = p
	}
	tool := func(name, desc string, op func(a, b float64) (float64, error)) mcpserver.Tool {
		return mcpserver.Tool{Name: name, Description: desc, InputSchema: pairSchema, Call: func(args json.RawMessage) (string, error) {
			var p struct{ A, B *float64 }
			if err := mcpserver.Args(args, &p); err != nil {
				return "", err
			}
			if p.A == nil || p.B == nil {
				return "", errors.New("bad arguments: a and b are both required")
			}
			r, err := op(*p.A, *p.B)
			if err != nil {
				return "", err
			}
			return strconv.FormatFloat(r, 'f', -1, 64), nil
		}}
	}
	round := func(x float64) float64 {
		scale := math.Pow(10, float64(precision))
		return math.Round(x*scale) / scale
	}
	s := &mcpserver.Server{
		Name:         "calc",
		Version:      "1.0.0",
		Instructions: fmt.Sprintf("Arithmetic on two numbers, rounded to %d decimal places.", precision),
		Tools: []mcpserver.Tool{
			tool("add", "a + b", func(a, b float64) (float64, error) { return round(a + b), nil }),
			tool("subtract", "a - b", func(a, b float64) (float64, error) { return round(a - b), nil }),
			tool("multiply", "a × b", func(a, b float64) (float64, error) { return round(a * b), nil }),
			tool("divide", "a ÷ b; b must not be 0", func(a, b float64) (float64, error) {
				if b == 0 {
					return 0, fmt.Errorf("cannot divide %v by zero", a)
				}
				return round(a / b), nil
			}),
		},
	}
	if err := s.Serve(os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
