package denormalize

import (
	"github.com/tablekit/tablekit/entity"
	"github.com/tablekit/tablekit/internal/entityfields"
)

// checkEncrypted refuses relations that would copy a property the sources'
// table encrypts (package crypt) into a property the targets' table does
// not always encrypt: the copy would hold the plaintext.
//
// Sources and targets in one table (SamePartition) are written in one
// transaction and read by one scan, each through the other's view too: the
// two tables must protect every property either type stores alike.
func checkEncrypted[T, S any](targets *entity.Table[T], sources *entity.Table[S], rels []*relation[T, S], tgtProps, srcProps *entityfields.Stored) error {
	if sources.Name() != "" && sources.Name() == targets.Name() && (sources.Protected() || targets.Protected()) {
		for _, name := range append(srcProps.Names(), tgtProps.Names()...) {
			sa, sm := sources.Encrypts(name)
			ta, tm := targets.Encrypts(name)
			if sa != ta || sm != tm {
				return &ConfigError{Field: "tables", Reason: "share the table " + sources.Name() + " and protect property " + name + " differently: " +
					"give each its own crypt Table over the table (package crypt), each naming the other's entity type in crypt.Config.Types, with the same Config.Encrypt"}
			}
		}
	}
	for i, r := range rels {
		for _, f := range r.Fields {
			_, maybe := sources.Encrypts(f.From)
			if always, _ := targets.Encrypts(f.To); maybe && !always {
				return &ConfigError{Relation: r.Name, Position: i, Field: "Fields",
					Reason: "copies " + f.From + ", which the sources' table encrypts (package crypt), into " + f.To + ", which the targets' table does not always encrypt: " +
						"tag the target's field encrypt, with the targets' table a crypt table's Entity, so that the copy is encrypted too"}
			}
		}
	}
	return nil
}

// rawKeys returns the keys of an entity body, for naming a row that does
// not decode.
func rawKeys(raw []byte) (Key, bool) {
	var k struct{ PartitionKey, RowKey string }
	if err := entity.Unmarshal(raw, &k); err != nil {
		return Key{}, false
	}
	return Key{k.PartitionKey, k.RowKey}, true
}
