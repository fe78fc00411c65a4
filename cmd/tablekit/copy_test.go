package main

import (
	"testing"
)

func TestCopyInProcess(t *testing.T) {
	src, srcName := newTable(t)
	fillTable(t, src, 500)
	dstName := env.TableName(t)
	r := must(t, 0, "copy", "--connection-string", env.ConnectionString, "--table", srcName, "--to-table", dstName)
	t.Log(r)
	sameRows(t, rawRows(t, env.ConnectionString, srcName), rawRows(t, env.ConnectionString, dstName))
}
