package denormalize

import "github.com/tablekit/tablekit/entity"

// checkEncrypted refuses relations that would copy a property the sources'
// table encrypts (package crypt) into a property the targets' table does
// not always encrypt: the copy would hold the plaintext.
func checkEncrypted[T, S any](targets *entity.Table[T], sources *entity.Table[S], rels []*relation[T, S]) error {
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
