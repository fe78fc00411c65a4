package backup

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// csvReader reads RFC 4180 records as encoding/csv's Reader does — fields
// separated by commas (or comma), records ended by LF or CR LF, empty
// lines skipped, quoted fields with doubled quotes, a quote in an
// unquoted field an error — except that a quoted field keeps every byte
// it holds: Go's Reader turns a CR LF inside a quoted field into LF, so a
// String with CR LF would come back changed.
type csvReader struct {
	r     *bufio.Reader
	comma byte
}

func newCSVReader(r io.Reader) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 64<<10), comma: ','}
}

// separators are the delimiters a table's CSV is written with: Storage
// Explorer writes the comma, or the list separator of the user's locale
// (a semicolon in much of Europe), and offers the tab.
const separators = ",;\t"

// detect sets the delimiter from the header row, which it peeks at without
// reading it: the first of comma, semicolon and tab under which the
// header has both a PartitionKey and a RowKey column (names that hold
// none of the three), else the comma.
func (c *csvReader) detect() {
	head, _ := c.r.Peek(c.r.Size())
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	line := strings.TrimPrefix(strings.TrimSuffix(string(head), "\r"), bom)
	for i := range len(separators) {
		sep := separators[i]
		var pk, rk bool
		for _, f := range strings.Split(line, string(sep)) {
			f = strings.TrimSuffix(strings.TrimPrefix(f, `"`), `"`)
			pk = pk || f == "PartitionKey"
			rk = rk || f == "RowKey"
		}
		if pk && rk {
			c.comma = sep
			return
		}
	}
}

var (
	errBareQuote = errors.New(`bare " in non-quoted field`)
	errQuote     = errors.New(`extraneous or missing " in quoted field`)
)

// readLine reads up to and including the next LF; "" and io.EOF at the
// end. As encoding/csv does, a CR that ends the input is dropped.
func (c *csvReader) readLine() (string, error) {
	l, err := c.r.ReadString('\n')
	if err == io.EOF {
		if l = strings.TrimSuffix(l, "\r"); l != "" {
			err = nil
		}
	}
	return l, err
}

// Read returns the next record, or io.EOF after the last.
func (c *csvReader) Read() ([]string, error) {
	var l string
	for {
		var err error
		if l, err = c.readLine(); err != nil {
			return nil, err
		}
		if l != "\n" && l != "\r\n" {
			break
		}
	}
	var rec []string
	var field strings.Builder
	pos := 0
	for {
		if pos < len(l) && l[pos] == '"' {
			pos++
			field.Reset()
			for {
				i := strings.IndexByte(l[pos:], '"')
				if i < 0 {
					field.WriteString(l[pos:])
					next, err := c.readLine()
					if err == io.EOF {
						return nil, errQuote
					}
					if err != nil {
						return nil, err
					}
					l, pos = next, 0
					continue
				}
				field.WriteString(l[pos : pos+i])
				pos += i + 1
				if pos < len(l) && l[pos] == '"' {
					field.WriteByte('"')
					pos++
					continue
				}
				break
			}
			rec = append(rec, field.String())
			switch rest := l[pos:]; {
			case rest != "" && rest[0] == c.comma:
				pos++
			case rest == "" || rest == "\n" || rest == "\r\n":
				return rec, nil
			default:
				return nil, errQuote
			}
			continue
		}
		i := strings.IndexByte(l[pos:], c.comma)
		last := i < 0
		var f string
		if last {
			f = l[pos:]
			if strings.HasSuffix(f, "\r\n") {
				f = f[:len(f)-2]
			} else {
				f = strings.TrimSuffix(f, "\n")
			}
		} else {
			f = l[pos : pos+i]
		}
		if strings.IndexByte(f, '"') >= 0 {
			return nil, errBareQuote
		}
		rec = append(rec, f)
		if last {
			return rec, nil
		}
		pos += i + 1
	}
}
