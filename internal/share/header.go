package share

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The first lines of a connection: the session's Header, the holder's Ack;
// the key under which the holder pools servers; and the notification with
// which the holder ends a connection.

// HeaderVersion is the version of Header and Ack this binary speaks. A
// holder refuses a header of another version (its Ack says so), and the
// session then runs its servers itself.
const HeaderVersion = 1

// maxHeader bounds the header line (its env included).
const maxHeader = 1 << 20

// Header is the line a session writes first on a connection: the server
// it wants, as its config entry has it.
type Header struct {
	V       int      `json:"v"`
	Key     string   `json:"key"` // the server's key in the session's config: for logs only
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Env is the environment the server is started with ("NAME=value"),
	// when it is the first of its key.
	Env []string `json:"env"`
	// KeyEnv are the entries of Env that the config sets ("NAME=value"):
	// part of the key, hashed, never written anywhere or logged.
	KeyEnv []string `json:"keyEnv"`
	// Dir is the server's working directory, resolved (the session's own
	// when its entry names none).
	Dir string `json:"dir"`
	// IdleMs is how long the server stays up after its last session, in
	// milliseconds (--share-idle).
	IdleMs int64 `json:"idleMs"`
	// Pid is the session's process id, for the holder's log.
	Pid int `json:"pid"`
}

// Idle is h.IdleMs as a duration.
func (h *Header) Idle() time.Duration { return time.Duration(h.IdleMs) * time.Millisecond }

// EntryKey is the key of the config entry h names: a hash of its command,
// args, working directory and the env its config sets, values included.
// Sessions whose entries have one key may share a process.
func (h *Header) EntryKey() string {
	d := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		d.Write(n[:])
		io.WriteString(d, s)
	}
	field(h.Command)
	field(fmt.Sprint(len(h.Args)))
	for _, a := range h.Args {
		field(a)
	}
	field(h.Dir)
	field(fmt.Sprint(len(h.KeyEnv)))
	for _, e := range h.KeyEnv {
		field(e)
	}
	return hex.EncodeToString(d.Sum(nil)[:16])
}

// Ack is the holder's answer to a Header: its pid, and an error when the
// connection cannot go on (the server could not be started, the header's
// version is unknown).
type Ack struct {
	V     int    `json:"v"`
	Pid   int    `json:"pid"`
	Error string `json:"error,omitempty"`
}

// ClosingMethod is the notification with which the holder ends a
// connection on purpose; the session side takes it in. Its params are
// closing.
const ClosingMethod = "notifications/mcp-simple-aggregator/closing"

// closing are the params of ClosingMethod.
type closing struct {
	Reason string `json:"reason"`
	// ServerEnded: the server process ended (the session's server ends
	// too); else only this connection ends, and the session connects
	// anew (its roots changed, say).
	ServerEnded bool `json:"serverEnded"`
}

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// errLongHeader is the error of a first line over maxHeader.
var errLongHeader = errors.New("share: header line too long")

// readLine reads one JSON line into v, reading no further than its newline.
func readLine(r *bufio.Reader, v any) error {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxHeader {
			return errLongHeader
		}
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return json.Unmarshal(line, v)
}
