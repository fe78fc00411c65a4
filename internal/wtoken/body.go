package wtoken

import "bytes"

// The body functions read and edit the top-level members of an entity's
// JSON object: the bodies tablekit encodes and the service returns, whose
// values are strings, numbers, true, false and null. Anything else makes
// them report "not found" (Find) or leave the body unchanged (Set, which
// then reports false).

var quotedName = []byte(`"` + Property)

// Mentions is a quick test that body may hold the property: false means it
// certainly does not.
func Mentions(body []byte) bool { return bytes.Contains(body, quotedName) }

// Find returns the value of the TkWrite string member of body.
func Find(body []byte) (string, bool) {
	if !Mentions(body) {
		return "", false
	}
	var val string
	found := false
	ok := members(body, func(name, value []byte, _, _ int) bool {
		if string(name) == Property && len(value) >= 2 && value[0] == '"' {
			if bytes.IndexByte(value, '\\') >= 0 {
				return false // a chain never needs escapes
			}
			val, found = string(value[1:len(value)-1]), true
			return false
		}
		return true
	})
	return val, ok && found
}

// Set returns body with the TkWrite member set to value, or removed when
// value is "", appended to dst. Its annotation, if any, is removed too.
// ok is false, and body returned unchanged, when body is not a flat JSON
// object.
func Set(dst, body []byte, value string) ([]byte, bool) {
	if !Mentions(body) {
		if value == "" {
			return append(dst, body...), true
		}
		start, end := skip(body, 0), len(body)-1
		for end >= 0 && isSpace(body[end]) {
			end--
		}
		// A body that is not a flat object (a nested value, say) is refused
		// here as below: Find could not read back a member appended to it.
		if start >= end || body[start] != '{' || body[end] != '}' ||
			!members(body, func(_, _ []byte, _, _ int) bool { return true }) {
			return append(dst, body...), false
		}
		out := append(dst, body[:end]...)
		i := len(out) - 1
		for i >= len(dst) && isSpace(out[i]) {
			i--
		}
		if i >= len(dst) && out[i] != '{' {
			out = append(out, ',')
		}
		out = appendMember(out, value)
		return append(out, body[end:]...), true
	}
	// Rebuild the object without the old member.
	out := append(dst, '{')
	n := 0
	ok := members(body, func(name, _ []byte, from, to int) bool {
		if string(name) == Property || string(name) == Property+"@odata.type" {
			return true
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, body[from:to]...)
		n++
		return true
	})
	if !ok {
		return append(dst[:len(dst):len(dst)], body...), false
	}
	if value != "" {
		if n > 0 {
			out = append(out, ',')
		}
		out = appendMember(out, value)
	}
	return append(out, '}'), true
}

func appendMember(out []byte, value string) []byte {
	out = append(out, quotedName...)
	out = append(out, `":"`...)
	out = append(out, value...)
	return append(out, '"')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// members calls fn for each top-level member of the object in body with
// its name (without quotes, escapes as is), its raw value, and the span
// [from, to) of the whole member, name to end of value. It stops when fn
// returns false. It returns false when body is not a flat object.
func members(body []byte, fn func(name, value []byte, from, to int) bool) bool {
	i := skip(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skip(body, i+1)
	if i < len(body) && body[i] == '}' {
		return true
	}
	for {
		start := i
		name, j, ok := str(body, i)
		if !ok {
			return false
		}
		j = skip(body, j)
		if j >= len(body) || body[j] != ':' {
			return false
		}
		j = skip(body, j+1)
		vEnd, ok := value(body, j)
		if !ok {
			return false
		}
		k := skip(body, vEnd)
		if k >= len(body) {
			return false
		}
		if !fn(name[1:len(name)-1], body[j:vEnd], start, vEnd) {
			return true
		}
		switch body[k] {
		case ',':
			i = skip(body, k+1)
		case '}':
			return true
		default:
			return false
		}
	}
}

func skip(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// str returns the quoted string at b[i:], quotes included, and the index
// after it.
func str(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return b[i : j+1], j + 1, true
		}
	}
	return nil, i, false
}

// value returns the end of the scalar value at b[i:].
func value(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	if b[i] == '"' {
		_, j, ok := str(b, i)
		return j, ok
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && !isSpace(b[j]) {
		if b[j] == '{' || b[j] == '[' || b[j] == '"' {
			return j, false
		}
		j++
	}
	return j, j > i
}
