package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/google/uuid"
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/integration"
	"github.com/tablekit/tablekit/integration/azurite"
	"github.com/tablekit/tablekit/keys"
)

var env *integration.Env

func TestMain(m *testing.M) { integration.Main(m, &env) }

// full reports whether the large variants run (TABLEKIT_FULL=1).
func full() bool { return os.Getenv("TABLEKIT_FULL") == "1" }

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// tk runs the command in-process.
func tk(t testing.TB, args ...string) result {
	t.Helper()
	return tkIn(t, context.Background(), nil, args...)
}

func tkIn(t testing.TB, ctx context.Context, stdin []byte, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, bytes.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// must runs the command and fails the test unless it exits with want.
func must(t testing.TB, want int, args ...string) result {
	t.Helper()
	r := tk(t, args...)
	if r.code != want {
		t.Fatalf("tablekit %s: %s", strings.Join(redactArgs(args), " "), r)
	}
	return r
}

func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.Contains(a, "AccountKey=") {
			a = "<connection string>"
		}
		out[i] = a
	}
	return out
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the command once per test run into a temporary directory.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tablekit-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tablekit")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// secondAccount starts another Azurite: another account, as far as the
// command can tell.
func secondAccount(t testing.TB) string {
	t.Helper()
	if env.Live {
		t.Skip("a second account needs Azurite")
	}
	s, err := azurite.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.ConnectionString
}

// awkwardPKs are PartitionKeys the service allows that trip naive code.
var awkwardPKs = []string{"", "O'Brien", "'", "''quoted''", "ü-日本-🎉", "a b", "100%", "a+b=c", "tab\u00a0nbsp", "\uffff"}

// fillTable writes n entities with every EDM type under awkward keys,
// spread over partitions (a few with awkward keys, the rest numbered).
func fillTable(t testing.TB, tbl *entity.Table[entity.DynamicEntity], n int) {
	t.Helper()
	ents := makeEntities(n)
	for i := 0; i < len(ents); i += 5000 {
		batch := ents[i:min(i+5000, len(ents))]
		if _, err := tbl.BulkWrite(context.Background(), batch, entity.BulkOptions{Concurrency: 8}); err != nil {
			t.Fatal(err)
		}
	}
}

func makeEntities(n int) []entity.DynamicEntity {
	ents := make([]entity.DynamicEntity, 0, n)
	base := time.Date(2024, 2, 29, 23, 59, 59, 123456700, time.UTC)
	for i := range n {
		var pk string
		if i%10 < 3 {
			pk = awkwardPKs[i%len(awkwardPKs)]
		} else {
			pk = fmt.Sprintf("p%03d", i%97)
		}
		rk := fmt.Sprintf("r%06d", i)
		switch i % 7 {
		case 1:
			rk += "'q'"
		case 2:
			rk += "-üñí🎉"
		case 3:
			rk += " sp%20+"
		}
		d := entity.DynamicEntity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{
			"S":      fmt.Sprintf("text #%d with 'quotes', \"dq\", ü 🎉, a # sign", i),
			"I32":    int32(i - n/2),
			"I64":    int64(math.MaxInt64 - int64(i)),
			"D":      float64(i) / 3,
			"DW":     float64(i), // a whole Double stays a Double
			"B":      i%2 == 0,
			"T":      base.Add(time.Duration(i) * 100),
			"G":      uuid.NewSHA1(uuid.NameSpaceOID, []byte(rk)),
			"Bin":    []byte{0, byte(i), 0xff, '#'},
			"Emp":    "",
			"Sparse": int32(i),
		}}
		if i%3 != 0 {
			delete(d.Properties, "Sparse")
		}
		ents = append(ents, d)
	}
	return ents
}

// newTable is a fresh table of the primary account.
func newTable(t testing.TB) (*entity.Table[entity.DynamicEntity], string) {
	t.Helper()
	client := env.Table(t)
	tbl, err := entity.NewTable[entity.DynamicEntity](client)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, tbl.Name()
}

// tableOf opens a table of any account by connection string, created if missing.
func tableOf(t testing.TB, cs, name string) *entity.Table[entity.DynamicEntity] {
	t.Helper()
	tbl, err := entity.NewTableFromConnectionString[entity.DynamicEntity](cs, name, entity.ClientOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rawRows reads a table with aztables alone, page by page, as the
// service's JSON: each entity's properties and their type annotations,
// without the service's own (ETag, Timestamp), keyed by its keys.
func rawRows(t testing.TB, cs, name string) map[string]map[string]any {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient(name)
	out := map[string]map[string]any{}
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: toPtr(aztables.MetadataFormatFull)})
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			for k := range m {
				if strings.HasPrefix(k, "odata.") || strings.HasPrefix(k, "Timestamp") {
					delete(m, k)
				}
			}
			key := fmt.Sprintf("%q/%q", m["PartitionKey"], m["RowKey"])
			if _, dup := out[key]; dup {
				t.Fatalf("table %s: %s read twice", name, key)
			}
			out[key] = m
		}
	}
	return out
}

func toPtr[T any](v T) *T { return &v }

// sameRows fails unless two tables hold the same entities, read raw.
func sameRows(t testing.TB, want, got map[string]map[string]any) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%d entities, want %d", len(got), len(want))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := 0
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			t.Errorf("missing %s", k)
		} else if !reflect.DeepEqual(want[k], g) {
			t.Errorf("%s differs:\nwant %v\ngot  %v", k, want[k], g)
		} else {
			continue
		}
		if bad++; bad > 5 {
			t.Fatal("…")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("extra %s", k)
			if bad++; bad > 5 {
				t.Fatal("…")
			}
		}
	}
}

// n is the number of entities of the main tests (TestOnOneTable's
// table): enough for several segments, pages of the copies' --page-size,
// parts of a split export and interrupts midway; 100,000 with
// TABLEKIT_FULL=1.
func n() int {
	if full() {
		return 100_000
	}
	return 600
}

// benchN is the number of entities of the benchmark: 2,000, or n's at
// full size.
func benchN() int {
	if full() {
		return n()
	}
	return 2000
}

func entityOpts() entity.BulkOptions { return entity.BulkOptions{} }

// jsonLine decodes the last JSON line of out.
func jsonLine(out string, v any) error {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return json.Unmarshal([]byte(lines[len(lines)-1]), v)
}

func compareUTF16(a, b string) int { return keys.Compare(a, b) }

func entityMarshal(d *entity.DynamicEntity) ([]byte, error) { return entity.Marshal(d) }

// listBlobs lists a container's blob names.
func listBlobs(t testing.TB, c *container.Client) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		pager := c.NewListBlobsFlatPager(nil)
		for pager.More() {
			page, err := pager.NextPage(context.Background())
			if err != nil {
				yield("", err)
				return
			}
			for _, b := range page.Segment.BlobItems {
				if !yield(*b.Name, nil) {
					return
				}
			}
		}
	}
}

// sameTyped fails unless two tables hold the same entities with the same
// EDM types, read through entity (SameContent compares the encodings): the
// check a raw read cannot make on Azurite, which annotates no Double.
func sameTyped(t testing.TB, a, b *entity.Table[entity.DynamicEntity]) {
	t.Helper()
	read := func(tbl *entity.Table[entity.DynamicEntity]) map[string]entity.DynamicEntity {
		m := map[string]entity.DynamicEntity{}
		for d, err := range tbl.Query(context.Background(), entity.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			m[fmt.Sprintf("%q/%q", d.PartitionKey, d.RowKey)] = d
		}
		return m
	}
	x, y := read(a), read(b)
	if len(x) != len(y) {
		t.Fatalf("%d entities and %d", len(x), len(y))
	}
	for k, d := range x {
		if e, ok := y[k]; !ok || !d.SameContent(e) {
			t.Fatalf("%s: %v and %v", k, d.Properties, e.Properties)
		}
	}
}
