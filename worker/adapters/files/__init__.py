"""Adapters over files: the instance-folder keystore and the keyring file."""
