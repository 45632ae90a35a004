package e2e

// The MCP client of the differential test (differential_test.go), as small
// as a client can be: one process it started, spoken to over stdio, where
// every request has a budget and ends in one of four ways. Unlike session
// (harness_test.go) it never fails the test itself: what happened is the
// outcome the test compares.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// category is how a request ended, as a client sees it. The order is the
// rank: a later one is better.
type category int

const (
	timedOut  category = iota // no answer within the client's budget
	lost                      // the connection ended first (the process exited, or would not take the request)
	rpcError                  // an error answer
	succeeded                 // a result
)

func (c category) String() string {
	return [...]string{"timed out", "connection lost", "JSON-RPC error", "succeeded"}[c]
}

// rank orders categories by what the client is left with: an answer, even
// an error, beats none (the client can fall back or report it), and a
// timeout is as bad as a lost connection.
func (c category) rank() int {
	switch c {
	case succeeded:
		return 2
	case rpcError:
		return 1
	}
	return 0
}

// answer is how one request ended.
type answer struct {
	cat    category
	result json.RawMessage // with succeeded: the result, byte for byte
	err    json.RawMessage // with rpcError: the error object
	took   time.Duration
}

func (a answer) String() string {
	switch a.cat {
	case succeeded:
		return fmt.Sprintf("%s in %v: %s", a.cat, a.took.Round(time.Millisecond), clip(a.result))
	case rpcError:
		return fmt.Sprintf("%s in %v: %s", a.cat, a.took.Round(time.Millisecond), clip(a.err))
	}
	return fmt.Sprintf("%s after %v", a.cat, a.took.Round(time.Millisecond))
}

// stdioPeer is a process the client started (a server, or the aggregator)
// and its connection to it.
type stdioPeer struct {
	what   string // "server fast", "the aggregator": for messages
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	gone   chan struct{} // closed once stdout has ended
	exited chan struct{} // closed once the process has exited and its pipes are drained
	err    error         // how it exited, after exited closes

	writeMu sync.Mutex // one whole line per write

	mu      sync.Mutex           // protects the fields below
	nextID  int                  // the last request id used
	pending map[string]chan *msg // requests sent and not answered, by raw id
	notes   []*msg               // notifications not yet taken
	noted   chan struct{}        // closed and replaced when a notification arrives
	stderr  bytes.Buffer
}

// startPeer starts argv with env added to the test's environment.
func startPeer(what string, argv []string, env ...string) (*stdioPeer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	p := &stdioPeer{what: what, cmd: cmd, gone: make(chan struct{}), exited: make(chan struct{}),
		pending: make(map[string]chan *msg), noted: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		defer close(p.gone)
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				p.read(line)
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer readers.Done()
		br := bufio.NewReader(stderr)
		for {
			line, err := br.ReadBytes('\n')
			p.mu.Lock()
			p.stderr.Write(line)
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		readers.Wait()
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// read takes one line of stdout: an answer goes to its request, a
// notification is kept for the client, a request is answered here (ping
// with {}, anything else as not supported). A line that is no message is
// dropped: this client is no judge of framing.
func (p *stdioPeer) read(line []byte) {
	m := &msg{line: bytes.TrimRight(line, "\r\n")}
	if json.Unmarshal(m.line, m) != nil {
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		if m.Method == "ping" {
			p.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		} else {
			p.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
		}
	case m.Method != "":
		p.mu.Lock()
		p.notes = append(p.notes, m)
		close(p.noted)
		p.noted = make(chan struct{})
		p.mu.Unlock()
	default:
		p.mu.Lock()
		ch := p.pending[string(m.ID)]
		delete(p.pending, string(m.ID))
		p.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// write sends one line.
func (p *stdioPeer) write(line string) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// notify sends a notification.
func (p *stdioPeer) notify(method string) {
	p.write(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method))
}

// request sends a request (params "" for none) and waits for its answer
// until budget has passed or the connection ends.
func (p *stdioPeer) request(method, params string, budget time.Duration) answer {
	began := time.Now()
	ch := make(chan *msg, 1)
	p.mu.Lock()
	p.nextID++
	id := fmt.Sprint(p.nextID)
	p.pending[id] = ch
	p.mu.Unlock()
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != "" {
		line += `,"params":` + params
	}
	if err := p.write(line + "}"); err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return answer{cat: lost, took: time.Since(began)}
	}
	timer := time.NewTimer(budget)
	defer timer.Stop()
	var m *msg
	select {
	case m = <-ch:
	case <-p.gone:
		select { // an answer read just before the end counts
		case m = <-ch:
		default:
			return answer{cat: lost, took: time.Since(began)}
		}
	case <-timer.C:
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return answer{cat: timedOut, took: time.Since(began)}
	}
	if m.Error != nil {
		return answer{cat: rpcError, err: m.Error, took: time.Since(began)}
	}
	return answer{cat: succeeded, result: m.Result, took: time.Since(began)}
}

// notification waits until deadline for the next notification; nil when
// none came or the connection ended.
func (p *stdioPeer) notification(deadline time.Time) *msg {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		p.mu.Lock()
		if len(p.notes) > 0 {
			m := p.notes[0]
			p.notes = p.notes[1:]
			p.mu.Unlock()
			return m
		}
		noted := p.noted
		p.mu.Unlock()
		select {
		case <-noted:
		case <-p.gone:
			return nil
		case <-timer.C:
			return nil
		}
	}
}

// close closes stdin, as clients end a stdio session, and waits for the
// process to exit; it kills a process still there after waitLimit, and
// says so.
func (p *stdioPeer) close() error {
	p.stdin.Close()
	select {
	case <-p.exited:
		return nil
	case <-time.After(waitLimit):
	}
	p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(waitLimit): // something it started holds its pipes
	}
	return fmt.Errorf("%s did not exit within %v of its stdin closing; stderr:\n%s", p.what, waitLimit, p.stderrText())
}

func (p *stdioPeer) stderrText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}
