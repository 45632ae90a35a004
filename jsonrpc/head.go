package jsonrpc

// HeadID returns the raw id of the message that head begins: head is the
// first bytes of a line, maybe cut anywhere, as Options.Oversized gets
// them. It finds the top-level "id" member of the object, if every member
// before it and the id itself are complete and valid JSON before the cut
// and the id is a string or a number (a number must be followed by a byte
// that ends it). So a line too long to read can still be answered under
// its id. ok is false when no such id is found; HeadID never panics.
//
// The id is a sub-slice of head, or, when it holds invalid UTF-8, a copy
// in which that is replaced as a Conn replaces it (see ToValidUTF8).
func HeadID(head []byte) (id []byte, ok bool) {
	i := skipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return nil, false
	}
	i = skipSpace(head, i+1)
	for {
		if i >= len(head) || head[i] != '"' {
			return nil, false
		}
		keyEnd, flags, ok := checkString(head, i, nil)
		if !ok {
			return nil, false
		}
		key := head[i+1 : keyEnd-1]
		if flags&escapedFlag != 0 {
			s, _ := String(head[i:keyEnd])
			key = []byte(s)
		}
		i = skipSpace(head, keyEnd)
		if i >= len(head) || head[i] != ':' {
			return nil, false
		}
		i = skipSpace(head, i+1)
		if string(key) == "id" {
			return headIDValue(head, i)
		}
		end, _, ok := checkValue(head, i, 1, nil)
		if !ok {
			return nil, false
		}
		i = skipSpace(head, end)
		if i >= len(head) || head[i] != ',' {
			return nil, false // the object ended without an id, or head did
		}
		i = skipSpace(head, i+1)
	}
}

// headIDValue returns the id value at head[i] if it is a complete string
// or number.
func headIDValue(head []byte, i int) ([]byte, bool) {
	if i >= len(head) {
		return nil, false
	}
	switch c := head[i]; {
	case c == '"':
		end, flags, ok := checkString(head, i, nil)
		if !ok {
			return nil, false
		}
		id := head[i:end:end]
		if flags&nonASCIIFlag != 0 {
			id = ToValidUTF8(id)
		}
		return id, true
	case c == '-' || isDigit(c):
		end, ok := checkNumber(head, i)
		if !ok || end >= len(head) || !(isSpace(head[end]) || head[end] == ',' || head[end] == '}') {
			return nil, false // maybe cut inside the number, or not JSON
		}
		return head[i:end:end], true
	}
	return nil, false
}
