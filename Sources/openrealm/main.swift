print("openrealm")
