package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchClient is the lean MCP client of the benchmarks. Unlike the session
// of the tests, which decodes every line with encoding/json, it writes
// prebuilt request lines and classifies the lines it reads with a prefix
// scan, so that the client costs as little as possible and the same for
// every way of reaching the test server.
//
// It is either sequential (call: write a request, read lines until its
// answer) or concurrent (concurrent: many goroutines send, one reader
// goroutine dispatches the answers by id); never both at once. In both modes
// it answers the requests the server sends (sampling/createMessage, ping,
// ...) with a canned result.
type benchClient struct {
	tb     testing.TB
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	br     *bufio.Reader
	stderr *tailBuffer
	pid    int

	wmu  sync.Mutex // each line is one Write
	wbuf []byte     // the sequential request being built

	nextID int64 // next request id; ids are small positive integers

	lines   atomic.Int64 // lines read, for the watchdog
	waiting atomic.Int64 // requests sent and not answered yet
	killed  atomic.Bool  // by the watchdog
	reading atomic.Bool  // a concurrent reader goroutine owns br
	stop    chan struct{}
	closed  sync.Once

	lmu   sync.Mutex
	longs []span // when readHead read each line longer than br's buffer
}

// span is when a line longer than the client's buffer was read: from when
// its first buffer was full to when its newline came.
type span struct {
	from, to time.Time
	size     int
}

// longLines returns the long lines read so far.
func (c *benchClient) longLines() []span {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	return append([]span(nil), c.longs...)
}

// tailBuffer keeps the last bytes written to it, for failure messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 512<<10 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-256<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// startBench starts argv and drives it as the client; the process is stopped
// (stdin closed, then killed if need be) when the benchmark ends.
func startBench(tb testing.TB, name string, argv ...string) *benchClient {
	tb.Helper()
	return startBenchEnv(tb, name, nil, argv...)
}

// startBenchEnv is startBench with env added to the process's environment.
func startBenchEnv(tb testing.TB, name string, env []string, argv ...string) *benchClient {
	tb.Helper()
	c := &benchClient{tb: tb, name: name, stderr: &tailBuffer{}, nextID: 1, stop: make(chan struct{})}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	if env != nil {
		c.cmd.Env = append(os.Environ(), env...)
	}
	c.cmd.Stderr = c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	c.pid = c.cmd.Process.Pid
	c.br = bufio.NewReaderSize(out, 1<<20)
	go c.watchdog()
	tb.Cleanup(c.close)
	return c
}

// watchdog kills the process when requests wait and nothing was read for
// waitLimit: a deadlock guard, not a measure.
func (c *benchClient) watchdog() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, idle := c.lines.Load(), time.Duration(0)
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		n := c.lines.Load()
		if n != last || c.waiting.Load() == 0 {
			last, idle = n, 0
			continue
		}
		if idle += time.Second; idle >= waitLimit {
			// A Go program prints its goroutines on SIGQUIT and exits.
			c.killed.Store(true)
			c.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-c.stop:
			case <-time.After(2 * time.Second):
			}
			c.cmd.Process.Kill()
			return
		}
	}
}

func (c *benchClient) close() {
	c.closed.Do(func() {
		close(c.stop)
		c.in.Close()
		exited := make(chan struct{})
		go func() {
			if !c.reading.Load() { // else that reader ends when Wait closes the pipe
				io.Copy(io.Discard, c.br)
			}
			c.cmd.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(waitLimit):
			c.cmd.Process.Kill()
			<-exited
		}
	})
}

// fail ends the benchmark with what the process wrote to stderr.
func (c *benchClient) fail(format string, args ...any) {
	c.tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if c.killed.Load() {
		msg += fmt.Sprintf(" (sent SIGQUIT, then killed, after %v without an answer)", waitLimit)
	}
	c.tb.Fatalf("%s: %s\nstderr:\n%s", c.name, msg, c.stderr.String())
}

// write writes one whole line.
func (c *benchClient) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.in.Write(line)
	return err
}

// writeAt writes one whole line made of parts, with no other line
// between them, and returns when it began: once no other line of the
// client's was being written.
func (c *benchClient) writeAt(parts ...[]byte) (time.Time, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	at := time.Now()
	for _, p := range parts {
		if _, err := c.in.Write(p); err != nil {
			return at, err
		}
	}
	return at, nil
}

// readLine returns the next line, valid until the next read.
func (c *benchClient) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	c.lines.Add(1)
	return line, nil
}

// readHead reads the next line and returns its first bytes (the whole
// line when it fits in the reader's buffer; valid until the next read)
// and its size: the rest of a longer line is read and dropped, as fast as
// the pipe brings it, so that a huge line costs the client no copies.
func (c *benchClient) readHead() (head []byte, size int, err error) {
	line, err := c.br.ReadSlice('\n')
	size = len(line)
	if errors.Is(err, bufio.ErrBufferFull) {
		from := time.Now()
		head = append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = c.br.ReadSlice('\n')
			size += len(line)
		}
		line = head
		c.lmu.Lock()
		c.longs = append(c.longs, span{from: from, to: time.Now(), size: size})
		c.lmu.Unlock()
	}
	if err != nil {
		return nil, 0, err
	}
	c.lines.Add(1)
	return line, size, nil
}

// Kinds of lines.
const (
	lineResponse = iota
	lineError    // a response carrying an error
	lineRequest  // a request of the server
	lineNotification
	lineOther
)

var (
	idPrefix     = []byte(`{"jsonrpc":"2.0","id":`)
	methodPrefix = []byte(`{"jsonrpc":"2.0","method":`)
)

// scanLine classifies a line and returns its raw id. Every peer here writes
// "jsonrpc" first and then "id" or "method", so a prefix scan is enough; any
// other layout goes the slow way through encoding/json.
func scanLine(line []byte) (kind int, id []byte) {
	rest, ok := bytes.CutPrefix(line, idPrefix)
	if !ok {
		if bytes.HasPrefix(line, methodPrefix) {
			return lineNotification, nil
		}
		return scanSlow(line)
	}
	end := 0
	for end < len(rest) && rest[end] != ',' && rest[end] != '}' {
		end++
	}
	id, rest = rest[:end], rest[end:]
	switch {
	case bytes.HasPrefix(rest, []byte(`,"result":`)):
		return lineResponse, id
	case bytes.HasPrefix(rest, []byte(`,"error":`)):
		return lineError, id
	case bytes.HasPrefix(rest, []byte(`,"method":`)):
		return lineRequest, id
	}
	return scanSlow(line)
}

func scanSlow(line []byte) (int, []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil {
		return lineOther, nil
	}
	switch {
	case m.Method != "" && m.ID != nil:
		return lineRequest, m.ID
	case m.Method != "":
		return lineNotification, nil
	case m.Error != nil && string(m.Error) != "null":
		return lineError, m.ID
	case m.ID != nil:
		return lineResponse, m.ID
	}
	return lineOther, nil
}

// idNumber parses a plain positive integer id; -1 if it is not one.
func idNumber(id []byte) int64 {
	if len(id) == 0 || len(id) > 18 {
		return -1
	}
	var n int64
	for _, d := range id {
		if d < '0' || d > '9' {
			return -1
		}
		n = n*10 + int64(d-'0')
	}
	return n
}

// samplingAnswer is the canned result of sampling/createMessage; every other
// server request is answered with an empty result.
const samplingAnswer = `{"role":"assistant","content":{"type":"text","text":"bench answer"},"model":"bench-model","stopReason":"endTurn"}`

// answer replies to a request of the server.
func (c *benchClient) answer(line, id []byte) error {
	result := "{}"
	if bytes.Contains(line, []byte(`"method":"sampling/createMessage"`)) {
		result = samplingAnswer
	}
	b := make([]byte, 0, len(idPrefix)+len(id)+len(result)+16)
	b = append(b, idPrefix...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return c.write(append(b, "}\n"...))
}

// request is a prebuilt request: everything after the id.
type request []byte

// newRequest prebuilds a request of method with raw params ("" for none).
func newRequest(method, params string) request {
	s := `,"method":` + strconv.Quote(method)
	if params != "" {
		s += `,"params":` + params
	}
	return request(s + "}\n")
}

// toolCall prebuilds a tools/call of tool with raw arguments.
func toolCallRequest(tool, args string) request {
	return newRequest("tools/call", `{"name":`+strconv.Quote(tool)+`,"arguments":`+args+`}`)
}

func appendRequest(b []byte, id int64, r request) []byte {
	b = append(b, idPrefix...)
	b = strconv.AppendInt(b, id, 10)
	return append(b, r...)
}

// call sends r and returns its answer line (valid until the next read),
// answering server requests and skipping notifications meanwhile. An error
// answer fails the benchmark.
func (c *benchClient) call(r request) []byte {
	c.tb.Helper()
	id := c.nextID
	c.nextID++
	c.wbuf = appendRequest(c.wbuf[:0], id, r)
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	if err := c.write(c.wbuf); err != nil {
		c.fail("writing request %d: %v", id, err)
	}
	for {
		line, err := c.readLine()
		if err != nil {
			c.fail("reading the answer to %d: %v", id, err)
		}
		kind, rid := scanLine(line)
		switch kind {
		case lineRequest:
			if err := c.answer(line, rid); err != nil {
				c.fail("answering a server request: %v", err)
			}
		case lineResponse, lineError:
			if idNumber(rid) != id {
				c.fail("answer to unknown id %s while waiting for %d: %s", rid, id, clip(line))
			}
			if kind == lineError {
				c.fail("error answer to %s: %s", bytes.TrimSpace(c.wbuf), clip(line))
			}
			return line
		case lineOther:
			c.fail("not a JSON-RPC line: %s", clip(line))
		}
	}
}

// handshake initializes with client capabilities caps and sends
// notifications/initialized.
func (c *benchClient) handshake(caps string) {
	c.tb.Helper()
	c.call(newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"bench","version":"1.0"}}`))
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		c.fail("writing notifications/initialized: %v", err)
	}
}

// timedCalls makes n sequential calls, rotating over rs, and appends the
// duration of each to durs.
func (c *benchClient) timedCalls(n int, rs []request, durs []time.Duration) []time.Duration {
	c.tb.Helper()
	for i := 0; i < n; i++ {
		start := time.Now()
		c.call(rs[i%len(rs)])
		durs = append(durs, time.Since(start))
	}
	return durs
}

// concurrent makes n calls from workers goroutines over the one connection,
// each sending a call and waiting for its answer, while one reader
// goroutine dispatches the answers by id; call i is rs[i%len(rs)]. It
// returns the time from the first send to the last answer.
func (c *benchClient) concurrent(workers, n int, rs []request) time.Duration {
	c.tb.Helper()
	if n <= 0 {
		return 0
	}
	if workers > n {
		workers = n
	}
	// Worker w sends ids base+w, base+w+workers, ...: the reader finds the
	// worker from the id alone.
	base := c.nextID
	slots := make([]chan bool, workers)
	for i := range slots {
		slots[i] = make(chan bool, 1)
	}
	var failure atomic.Pointer[string]
	dead := make(chan struct{})
	setFailure := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if failure.CompareAndSwap(nil, &msg) {
			close(dead)
		}
	}
	readerDone := make(chan struct{})
	c.reading.Store(true)
	go func() {
		defer close(readerDone)
		defer c.reading.Store(false)
		for got := 0; got < n; {
			line, err := c.readLine()
			if err != nil {
				setFailure("reading answers: %v", err)
				return
			}
			kind, rid := scanLine(line)
			switch kind {
			case lineRequest:
				if err := c.answer(line, rid); err != nil {
					setFailure("answering a server request: %v", err)
					return
				}
			case lineResponse, lineError:
				id := idNumber(rid)
				if id < base {
					setFailure("answer to unknown id %s: %s", rid, clip(line))
					return
				}
				if kind == lineError {
					setFailure("error answer: %s", clip(line))
					return
				}
				got++
				slots[(id-base)%int64(workers)] <- true
			case lineOther:
				setFailure("not a JSON-RPC line: %s", clip(line))
				return
			}
		}
	}()

	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for k := int64(0); ; k++ {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				id := base + int64(w) + k*int64(workers)
				buf = appendRequest(buf[:0], id, rs[i%int64(len(rs))])
				c.waiting.Add(1)
				if err := c.write(buf); err != nil {
					setFailure("writing: %v", err)
					return
				}
				select {
				case <-slots[w]:
					c.waiting.Add(-1)
				case <-dead:
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case <-readerDone:
	case <-dead:
	}
	if f := failure.Load(); f != nil {
		c.fail("%s", *f)
	}
	c.waiting.Store(0)
	// Ids used: fewer than n+workers per worker lane.
	c.nextID = base + int64(n+workers)*int64(workers)
	return elapsed
}

// rssKB returns a field of /proc/PID/status in kB (VmRSS, VmHWM).
func rssKB(tb testing.TB, pid int, field string) float64 {
	tb.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc/PID/status here: %v", err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// stats are the order statistics of durations, in microseconds.
type stats struct {
	n                     int
	median, p99, min, max float64
}

func summarize(durs []time.Duration) stats {
	if len(durs) == 0 {
		return stats{}
	}
	d := append([]time.Duration(nil), durs...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	us := func(x time.Duration) float64 { return float64(x) / float64(time.Microsecond) }
	med := us(d[len(d)/2])
	if len(d)%2 == 0 {
		med = (us(d[len(d)/2-1]) + us(d[len(d)/2])) / 2
	}
	p := (len(d)*99 + 99) / 100 // ceil(0.99 n)
	return stats{n: len(d), median: med, p99: us(d[p-1]), min: us(d[0]), max: us(d[len(d)-1])}
}

// procUsage is what a process has used so far, summed over its threads.
type procUsage struct {
	cpu      time.Duration // run time (/proc/PID/task/*/schedstat)
	switches int64         // context switches, voluntary or not
}

// usage reads the usage of pid; zero where /proc has no such files (threads
// that have exited are not counted, which the Go runtime seldom does).
func usage(pid int) procUsage {
	var u procUsage
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return u
	}
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if b, err := os.ReadFile(dir + "schedstat"); err == nil {
			var ns int64
			fmt.Sscan(string(b), &ns)
			u.cpu += time.Duration(ns)
		}
		b, err := os.ReadFile(dir + "status")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(strings.SplitN(l, ":", 2)[0], "ctxt_switches") {
				var n int64
				fmt.Sscan(strings.TrimSpace(strings.SplitN(l, ":", 2)[1]), &n)
				u.switches += n
			}
		}
	}
	return u
}

func (u procUsage) sub(v procUsage) procUsage {
	return procUsage{cpu: u.cpu - v.cpu, switches: u.switches - v.switches}
}
