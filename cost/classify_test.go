package cost

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClassifyAccountURLs(t *testing.T) {
	cases := []struct {
		method, url string
		header      map[string]string
		want        Key
	}{
		{"POST", "https://acct.table.core.windows.net/$batch", nil, Key{Table, OpBatch}},
		{"POST", "https://acct.table.core.windows.net/Tables", nil, Key{Table, OpCreateTable}},
		{"GET", "https://acct.table.core.windows.net/Tables", nil, Key{Table, OpListTables}},
		{"DELETE", "https://acct.table.core.windows.net/Tables('t1')", nil, Key{Table, OpDeleteTable}},
		{"GET", "https://acct.table.core.windows.net/t1(PartitionKey='a',RowKey='b')", nil, Key{Table, OpGet}},
		{"GET", "https://acct.table.core.windows.net/t1()?$filter=x", nil, Key{Table, OpQuery}},
		{"POST", "https://acct.table.core.windows.net/t1", nil, Key{Table, OpInsert}},
		{"PUT", "https://acct.table.core.windows.net/t1(PartitionKey='a',RowKey='b')", map[string]string{"If-Match": "*"}, Key{Table, OpUpdate}},
		{"MERGE", "https://acct.table.core.windows.net/t1(PartitionKey='a',RowKey='b')", nil, Key{Table, OpUpsert}},
		{"DELETE", "https://acct.table.core.windows.net/t1(PartitionKey='a',RowKey='b')", nil, Key{Table, OpDelete}},
		{"GET", "https://acct.table.core.windows.net/t1?comp=acl", nil, Key{Table, OpTableACL}},
		{"POST", "https://acct.queue.core.windows.net/q/messages", nil, Key{Queue, OpPutMessage}},
		{"GET", "https://acct.queue.core.windows.net/q/messages?numofmessages=32", nil, Key{Queue, OpGetMessages}},
		{"GET", "https://acct.queue.core.windows.net/q/messages?peekonly=true", nil, Key{Queue, OpPeekMessages}},
		{"PUT", "https://acct.queue.core.windows.net/q/messages/id?popreceipt=x", nil, Key{Queue, OpUpdateMessage}},
		{"DELETE", "https://acct.queue.core.windows.net/q/messages/id?popreceipt=x", nil, Key{Queue, OpDeleteMessage}},
		{"DELETE", "https://acct.queue.core.windows.net/q/messages", nil, Key{Queue, OpClearMessages}},
		{"PUT", "https://acct.queue.core.windows.net/q", nil, Key{Queue, OpCreateQueue}},
		{"DELETE", "https://acct.queue.core.windows.net/q", nil, Key{Queue, OpDeleteQueue}},
		{"GET", "https://acct.queue.core.windows.net/q?comp=metadata", nil, Key{Queue, OpQueueMetadata}},
		{"GET", "https://acct.queue.core.windows.net/?comp=list", nil, Key{Queue, OpListQueues}},
		{"PUT", "https://acct.blob.core.windows.net/c?restype=container", nil, Key{Blob, OpCreateContainer}},
		{"DELETE", "https://acct.blob.core.windows.net/c?restype=container", nil, Key{Blob, OpDeleteContainer}},
		{"GET", "https://acct.blob.core.windows.net/c?restype=container&comp=list", nil, Key{Blob, OpListBlobs}},
		{"PUT", "https://acct.blob.core.windows.net/c/a/b.log", nil, Key{Blob, OpPutBlob}},
		{"PUT", "https://acct.blob.core.windows.net/c/b?comp=appendblock", nil, Key{Blob, OpAppendBlock}},
		{"PUT", "https://acct.blob.core.windows.net/c/b?comp=block&blockid=x", nil, Key{Blob, OpPutBlock}},
		{"PUT", "https://acct.blob.core.windows.net/c/b?comp=blocklist", nil, Key{Blob, OpPutBlockList}},
		{"PUT", "https://acct.blob.core.windows.net/c/b?comp=metadata", nil, Key{Blob, OpSetBlobMetadata}},
		{"GET", "https://acct.blob.core.windows.net/c/b", nil, Key{Blob, OpGetBlob}},
		{"HEAD", "https://acct.blob.core.windows.net/c/b", nil, Key{Blob, OpGetBlobProperties}},
		{"DELETE", "https://acct.blob.core.windows.net/c/b", nil, Key{Blob, OpDeleteBlob}},
		// Path-style (Azurite): the account is the first segment.
		{"POST", "http://127.0.0.1:10002/devstoreaccount1/t1", map[string]string{"Content-Type": "application/json"}, Key{Table, OpInsert}},
		{"POST", "http://127.0.0.1:10002/devstoreaccount1/$batch", nil, Key{Table, OpBatch}},
		{"POST", "http://127.0.0.1:10001/devstoreaccount1/q/messages", nil, Key{Queue, OpPutMessage}},
		{"PUT", "http://127.0.0.1:10001/devstoreaccount1/q", nil, Key{Queue, OpCreateQueue}},
		{"PUT", "http://127.0.0.1:10000/devstoreaccount1/c?restype=container", nil, Key{Blob, OpCreateContainer}},
		{"GET", "http://localhost:10000/devstoreaccount1/c/x/y", nil, Key{Blob, OpGetBlob}},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.url, nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		if got := Classify(r); got != c.want {
			t.Errorf("%s %s = %v, want %v", c.method, c.url, got, c.want)
		}
	}
	// The forced service of PolicyFor wins over the shape.
	r, _ := http.NewRequest("GET", "http://127.0.0.1:1/acct/x/y", nil)
	if got := operationOf(Queue, r); got == OpGetBlob {
		t.Errorf("operationOf(Queue) used blob rules: %s", got)
	}
}
