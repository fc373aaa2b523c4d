"""Mining pull requests and the references between them into the store."""
