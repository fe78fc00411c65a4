#!/bin/sh
# Builds the legacy (.NET TableEncryptionPolicy) test vectors with openssl and
# sha256sum only, from the published algorithm, independently of the Go code
# that reads them:
#   content key (CEK) 32 bytes, wrapped by RFC 3394 (A256KW) under the KEK;
#   IV of property n = SHA-256(ContentEncryptionIV | RowKey PartitionKey n)[:16]
#     (.NET; the Java v1 client used PartitionKey RowKey n);
#   each value AES-256-CBC with PKCS#7 padding, stored as Edm.Binary;
#   _ClientEncryptionMetadata2 = the name list encrypted the same way under
#     the name "_ClientEncryptionMetadata2";
#   _ClientEncryptionMetadata1 = the JSON document with the wrapped key.
# Run from this directory: sh gen.sh
set -eu
KEK=606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f
CEK=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
CIV=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf
PK=Sales
RK=000123

hex2bin() { printf '%s' "$1" | xxd -r -p; }
b64() { base64 -w0; }
# iv NAME ORDER: the first 16 bytes of SHA-256(CIV | keys-and-name), as hex.
iv() { { hex2bin "$CIV"; printf '%s' "$1"; } | sha256sum | cut -c1-32; }
# enc IVSTRING PLAINTEXT: base64 of AES-256-CBC(CEK, iv(IVSTRING), PLAINTEXT).
enc() { printf '%s' "$2" | openssl enc -aes-256-cbc -K "$CEK" -iv "$(iv "$1")" | b64; }

WRAPPED=$(hex2bin "$CEK" | openssl enc -id-aes256-wrap -K "$KEK" -iv A6A6A6A6A6A6A6A6 | b64)
CIVB64=$(hex2bin "$CIV" | b64)

body() { # KIND ORDER-PREFIX LIST LIBRARY
	kind=$1 names=$3
	if [ "$kind" = java ]; then keys="$PK$RK"; else keys="$RK$PK"; fi
	meta="{\"WrappedContentKey\":{\"KeyId\":\"legacy-kek\",\"EncryptedKey\":\"$WRAPPED\",\"Algorithm\":\"A256KW\"},\"EncryptionAgent\":{\"Protocol\":\"1.0\",\"EncryptionAlgorithm\":\"AES_CBC_256\"},\"ContentEncryptionIV\":\"$CIVB64\"$4}"
	meta=$(printf '%s' "$meta" | sed 's/"/\\"/g')
	printf '{"odata.etag":"W/\\"datetime%s2015-01-01T00%%3A00%%3A00.0000000Z%s\\"","PartitionKey":"%s","RowKey":"%s","Timestamp":"2015-01-01T00:00:00.0000000Z",' "'" "'" "$PK" "$RK"
	printf '"Email@odata.type":"Edm.Binary","Email":"%s",' "$(enc "${keys}Email" "jonesj@contoso.com")"
	printf '"Name@odata.type":"Edm.Binary","Name":"%s",' "$(enc "${keys}Name" "Jonathan Jones")"
	printf '"Dept":"Sales",'
	printf '"_ClientEncryptionMetadata1":"%s",' "$meta"
	printf '"_ClientEncryptionMetadata2@odata.type":"Edm.Binary","_ClientEncryptionMetadata2":"%s"}\n' "$(enc "${keys}_ClientEncryptionMetadata2" "$names")"
}

body dotnet x '["Email","Name"]' ',"KeyWrappingMetadata":{"EncryptionLibrary":".NET 9.3.3"}' > dotnet.json
body java x '[Email, Name]' '' > java.json
