package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/connstr"
)

// TestAzuriteByHand: the connection string the README gives for an
// Azurite started by hand on other ports parses, with Azurite's
// well-known key and the ports of the command above it, and that command
// passes --skipApiVersionCheck (without which Azurite refuses the Go
// SDK's blob requests).
func TestAzuriteByHand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^export TABLEKIT_CONNECTION_STRING='(AccountName=devstoreaccount1;[^']*)'$`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("no connection string with explicit endpoints in the README")
	}
	p, err := connstr.Parse(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	if p.AccountKey != connstr.DevAccountKey || p.TableEndpoint != "http://127.0.0.1:10102/devstoreaccount1/" || p.QueueEndpoint != "http://127.0.0.1:10101/devstoreaccount1/" || p.BlobEndpoint != "http://127.0.0.1:10100/devstoreaccount1/" {
		t.Errorf("the README's connection string reads %+v", p)
	}
	i := strings.Index(string(readme), string(m[0]))
	start := strings.LastIndex(string(readme[:i]), "npx azurite")
	if start < 0 || !strings.Contains(string(readme[start:i]), "--skipApiVersionCheck") || !strings.Contains(string(readme[start:i]), "--tablePort 10102") {
		t.Error("the command that starts Azurite by hand, before the connection string, must pass --skipApiVersionCheck and --tablePort 10102")
	}
}
